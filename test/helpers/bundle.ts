// One ES module file from a TypeScript entry and everything it imports (our sources and the
// packages alike), for a program a test starts many times: `node <bundle>.mjs` starts in ~0.1-0.2 s
// of CPU where `node --import tsx <entry>.ts` takes ~0.6-0.9 s, most of it tsx's module hooks (on
// Node 20 every import crosses to the hooks thread) and loading hundreds of files. The code is the
// same (tsx compiles with esbuild too, one file at a time); only the loading differs.
//
// In a bundle every module would share the bundle's import.meta.url; ours (src/, test/) keep their
// own source file's URL, so that what they find next to themselves (../package.json, config/,
// packages by createRequire) is what they find when run from source.
//
// esbuild is tsx's own dependency, resolved from tsx: no package of our own to keep in step.
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface Esbuild {
  build(options: Record<string, unknown>): Promise<unknown>;
}
interface PluginBuild {
  onLoad(options: { filter: RegExp }, callback: (args: { path: string }) => Promise<{ contents: string; loader: string }>): void;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));
const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Our TypeScript files keep their own import.meta (url, filename, dirname) in the bundle. */
const ownImportMeta = {
  name: 'own-import-meta',
  setup(build: PluginBuild): void {
    build.onLoad({ filter: new RegExp(`^${escapeRegExp(ROOT)}(src|test)/.*\\.ts$`) }, async ({ path }) => {
      const text = await readFile(path, 'utf8');
      const contents = text
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
        .replaceAll('import.meta.filename', JSON.stringify(path))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)));
      return { contents, loader: 'ts' };
    });
  },
};

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
    plugins: [ownImportMeta],
  });
}

const bundles = new Map<string, Promise<string>>();

/** `entry` (a path under the repository root) bundled once per process, into a temporary directory removed at exit. */
export function bundled(entry: string): Promise<string> {
  let out = bundles.get(entry);
  if (!out) {
    out = (async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mcp-warden-bundle-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'bundle.mjs');
      await bundle(join(ROOT, entry), file);
      return file;
    })();
    bundles.set(entry, out);
  }
  return out;
}

/**
 * The arguments after `node` that run src/cli.ts: a bundle of it (bundled()). MCP_WARDEN_TEST_CLI=tsx
 * runs `--import tsx src/cli.ts` instead (from the repository root), e.g. to see a stack trace in
 * the sources.
 */
export async function cliArgs(): Promise<string[]> {
  if (process.env.MCP_WARDEN_TEST_CLI === 'tsx') return ['--import', 'tsx', join(ROOT, 'src/cli.ts')];
  return [await bundled('src/cli.ts')];
}
