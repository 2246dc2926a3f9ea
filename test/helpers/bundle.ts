// One ES module file from a TypeScript entry and everything it imports (our sources and the
// packages alike), for a program a test starts many times: `node <bundle>.mjs` starts in ~0.1 s of
// CPU where `node --import tsx <entry>.ts` takes ~0.6 s, most of it tsx's module hooks (on Node 20
// every import crosses to the hooks thread) and the SDK's hundreds of files. The code is the same
// (tsx compiles with esbuild too, one file at a time); only the loading differs.
//
// esbuild is tsx's own dependency, resolved from tsx: no package of our own to keep in step.
import { createRequire } from 'node:module';

interface Esbuild {
  build(options: Record<string, unknown>): Promise<{ errors: unknown[]; warnings: unknown[] }>;
}

const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));

/**
 * Bundles `entry` into `outfile` (ESM, for this Node). CommonJS packages in the bundle may still
 * `require` Node's built-ins, so the bundle gets a `require` of its own.
 */
export async function bundle(entry: string, outfile: string): Promise<void> {
  const esbuild = fromTsx('esbuild') as Esbuild;
  await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node}`,
    logLevel: 'error',
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  });
}
