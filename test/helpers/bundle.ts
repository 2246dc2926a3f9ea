// One ES module file from an entry (ours in TypeScript, or a package's) and everything it imports (our sources and the
// packages alike), for a program a test starts many times: `node <bundle>.mjs` starts in ~0.1-0.2 s
// of CPU where `node --import tsx <entry>.ts` takes ~0.6-0.9 s, most of it tsx's module hooks (on
// Node 20 every import crosses to the hooks thread) and loading hundreds of files. The code is the
// same (tsx compiles with esbuild too, one file at a time); only the loading differs.
//
// In a bundle every module would share the bundle's import.meta.url; each keeps its own source
// file's (test/helpers/source-meta.mjs), so that what it finds next to itself (../package.json,
// config/, a package's own files, packages by createRequire) is what it finds when run in place.
//
// esbuild is tsx's own dependency, resolved from tsx: no package of our own to keep in step.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SOURCE_META_DEFINE, sourceMeta } from './source-meta.mjs';

interface Esbuild {
  build(options: Record<string, unknown>): Promise<{ metafile: { inputs: Record<string, unknown> } }>;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));

/**
 * Bundles `entry` into `outfile` (ESM, for this Node); returns the absolute paths of its inputs.
 * CommonJS packages in the bundle may still `require` Node's built-ins, so the bundle gets a
 * `require` of its own.
 */
export async function bundle(entry: string, outfile: string): Promise<string[]> {
  const esbuild = fromTsx('esbuild') as Esbuild;
  const result = await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node}`,
    logLevel: 'error',
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    plugins: [sourceMeta(/\.[cm]?[jt]s$/)],
    define: SOURCE_META_DEFINE,
    metafile: true,
  });
  // The metafile names inputs relative to the working directory.
  return Object.keys(result.metafile.inputs).map((path) => resolve(path));
}

const bundles = new Map<string, Promise<string>>();
const CACHE = join(ROOT, 'node_modules/.cache/mcp-warden/bundles');
/** How bundles are built (this file and the plugin it uses): a change builds them again. */
const HOW = createHash('sha256')
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .update(readFileSync(fileURLToPath(new URL('./source-meta.mjs', import.meta.url))))
  .digest('hex')
  .slice(0, 12);

interface Input {
  path: string;
  mtimeMs: number;
  size: number;
}

/** Every input of a build is as it was then (same size and modification time). */
function unchanged(inputs: readonly Input[]): boolean {
  try {
    return inputs.every((i) => {
      const st = statSync(i.path);
      return st.mtimeMs === i.mtimeMs && st.size === i.size;
    });
  } catch {
    return false;
  }
}

/**
 * `entry` (a path under the repository root) bundled, once for as long as none of its inputs
 * changes: the bundle and the list of its inputs stay in node_modules/.cache/mcp-warden/bundles,
 * so the test processes of a run (and the next run) share one build (~1 s of esbuild's CPU each).
 * A process that finds it stale builds it again; files are replaced by rename, so a process that
 * reads while another writes gets one whole build or the other.
 */
export function bundled(entry: string): Promise<string> {
  let out = bundles.get(entry);
  if (!out) {
    out = (async () => {
      const key = `${entry.replace(/[^\w.-]/g, '_')}-node${process.versions.node}-${HOW}`;
      const file = join(CACHE, `${key}.mjs`);
      const list = join(CACHE, `${key}.inputs.json`);
      try {
        if (existsSync(file) && unchanged(JSON.parse(readFileSync(list, 'utf8')) as Input[])) return file;
      } catch {
        // no list, or not one we wrote: build
      }
      mkdirSync(CACHE, { recursive: true });
      const tmp = join(CACHE, `${key}.${process.pid}.${Date.now()}`);
      const built = await bundle(join(ROOT, entry), `${tmp}.mjs`);
      const inputs = built.map((path) => {
        const st = statSync(path);
        return { path, mtimeMs: st.mtimeMs, size: st.size };
      });
      writeFileSync(`${tmp}.json`, JSON.stringify(inputs));
      renameSync(`${tmp}.mjs`, file);
      renameSync(`${tmp}.json`, list);
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
