// One file from an entry (ours in TypeScript, or a package's) and everything it imports (our
// sources and the packages alike), for a program a test starts many times: `node <bundle>` starts
// in ~0.1-0.3 s of CPU where `node --import tsx <entry>.ts` takes ~0.6-1 s, most of it tsx's module
// hooks (on Node 20 every import crosses to the hooks thread) and loading hundreds of files. The
// code is the same (tsx compiles with esbuild too, one file at a time); only the loading differs.
// bundled() makes it CommonJS, run from V8's code cache (code-cache.cjs), unless the entry awaits
// at its top level (an ES module then).
//
// In a bundle every module would share the bundle's import.meta.url; each keeps its own source
// file's (test/helpers/source-meta.mjs), so that what it finds next to itself (../package.json,
// config/, a package's own files, packages by createRequire) is what it finds when run in place.
//
// esbuild is tsx's own dependency, resolved from tsx: no package of our own to keep in step.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SOURCE_META_DEFINE, sourceMeta } from './source-meta.mjs';

interface PluginBuild {
  onResolve(
    options: { filter: RegExp },
    callback: (args: { path: string; kind: string }) => { path: string; namespace: string } | undefined,
  ): void;
  onLoad(options: { filter: RegExp; namespace: string }, callback: (args: { path: string }) => { contents: string; loader: string }): void;
}

/**
 * A CommonJS bundle runs in a vm.Script (code-cache.cjs), where import() has no loader: an
 * import() of a node built-in (OpenTelemetry's exporter loads http so) becomes its require().
 */
const builtinImportsAsRequires = {
  name: 'builtin-imports-as-requires',
  setup(build: PluginBuild): void {
    build.onResolve({ filter: /.*/ }, (args) =>
      args.kind === 'dynamic-import' && isBuiltin(args.path) ? { path: args.path, namespace: 'builtin-require' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'builtin-require' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

interface Esbuild {
  build(options: Record<string, unknown>): Promise<{ metafile: { inputs: Record<string, unknown> } }>;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));

/**
 * Bundles `entry` into `outfile` (for this Node; an ES module unless `format` says 'cjs'); returns
 * the absolute paths of its inputs. CommonJS packages in an ES module bundle may still `require`
 * Node's built-ins, so such a bundle gets a `require` of its own. A CommonJS bundle is for
 * code-cache.cjs to run: without comments or line breaks (less to read and parse).
 */
export async function bundle(entry: string, outfile: string, format: 'esm' | 'cjs' = 'esm'): Promise<string[]> {
  const esbuild = fromTsx('esbuild') as Esbuild;
  const result = await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format,
    target: `node${process.versions.node}`,
    logLevel: 'error',
    ...(format === 'esm'
      ? {
          banner: {
            js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
          },
        }
      : { minifyWhitespace: true, legalComments: 'none' }),
    plugins: [sourceMeta(/\.[cm]?[jt]s$/), ...(format === 'cjs' ? [builtinImportsAsRequires] : [])],
    define: SOURCE_META_DEFINE,
    metafile: true,
  });
  // The metafile names files relative to the working directory, and other inputs `namespace:name`.
  return Object.keys(result.metafile.inputs)
    .filter((path) => !path.startsWith('builtin-require:'))
    .map((path) => resolve(path));
}

const bundles = new Map<string, Promise<string>>();
const CACHE = join(ROOT, 'node_modules/.cache/mcp-warden/bundles');
const CODE_CACHE = fileURLToPath(new URL('./code-cache.cjs', import.meta.url));
/** How bundles are built and run (this file, the plugin it uses, the runner): a change builds them again. */
const HOW = createHash('sha256')
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .update(readFileSync(fileURLToPath(new URL('./source-meta.mjs', import.meta.url))))
  .update(readFileSync(CODE_CACHE))
  .digest('hex')
  .slice(0, 12);

/**
 * `code` (esbuild's output, whose strings and names are escaped already) with the non-ASCII
 * characters left in its regular expression literals escaped as \\uXXXX, which match the same
 * (a backslash before one escaped it to itself: it goes). Node reads an ASCII file ~30-60 times
 * faster (4.7 MB of UTF-8 with a few non-ASCII characters took ~30-70 ms a start) and V8 keeps and
 * parses it one byte a character.
 */
export function asciiOnly(code: string): string {
  return code.replace(/(\\*)([\u0080-\uffff])/g, (_, slashes: string, c: string) => {
    const escaped = `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    return slashes.length % 2 === 1 ? slashes.slice(1) + escaped : slashes + escaped;
  });
}

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
 * Writes the files that run `built` (a CommonJS bundle at `${tmp}.code.cjs`) with its code cache:
 * the bundle, named by its content (code-cache.cjs; run by it, not as a script, so no #!), and
 * `${tmp}.cjs`, which runs it.
 */
function cachedRunner(tmp: string, code: string): void {
  const compiled = asciiOnly(readFileSync(`${tmp}.code.cjs`, 'utf8').replace(/^#!.*/, ''));
  writeFileSync(`${tmp}.code.cjs`, `// build ${createHash('sha256').update(compiled).digest('hex').slice(0, 16)}\n${compiled}`);
  writeFileSync(`${tmp}.cjs`, `require(${JSON.stringify(CODE_CACHE)}).run(${JSON.stringify(code)});\n`);
  renameSync(`${tmp}.code.cjs`, code);
}

/** Removes the files of `key`'s earlier builds (same entry and node, built another way). */
function pruneEarlier(key: string): void {
  const entryAndNode = key.slice(0, key.lastIndexOf('-') + 1);
  for (const name of readdirSync(CACHE)) {
    if (name.startsWith(entryAndNode) && !name.startsWith(`${key}.`)) rmSync(join(CACHE, name), { force: true });
  }
}

/**
 * `entry` (a path under the repository root) bundled, once for as long as none of its inputs
 * changes. As 'cjs' (the default), `<key>.cjs`: a file that runs the bundle (`<key>.code.cjs`) with
 * V8's code cache (code-cache.cjs; ~0.26 s of CPU to the proxy's `listening`, against ~0.37 s for
 * an ES module bundle); as 'esm', `<key>.mjs`, for an entry that awaits at its top level. The files
 * and the list of the inputs stay in node_modules/.cache/mcp-warden/bundles, so the test processes
 * of a run (and the next run) share one build (~1 s of esbuild's CPU each). A process that finds it
 * stale builds it again; files are replaced by rename, so a process that reads while another
 * writes gets one whole build or the other.
 */
export function bundled(entry: string, format: 'cjs' | 'esm' = 'cjs'): Promise<string> {
  const key = `${entry.replace(/[^\w.-]/g, '_')}-${format}-node${process.versions.node}-${HOW}`;
  let out = bundles.get(key);
  if (!out) {
    out = (async () => {
      const file = join(CACHE, `${key}.${format === 'cjs' ? 'cjs' : 'mjs'}`);
      const list = join(CACHE, `${key}.inputs.json`);
      try {
        if (existsSync(file) && unchanged(JSON.parse(readFileSync(list, 'utf8')) as Input[])) return file;
      } catch {
        // no list, or not one we wrote: build
      }
      mkdirSync(CACHE, { recursive: true });
      pruneEarlier(key);
      const tmp = join(CACHE, `${key}.${process.pid}.${Date.now()}`);
      const built = await bundle(join(ROOT, entry), format === 'cjs' ? `${tmp}.code.cjs` : `${tmp}.mjs`, format);
      if (format === 'cjs') cachedRunner(tmp, join(CACHE, `${key}.code.cjs`));
      const inputs = built.map((path) => {
        const st = statSync(path);
        return { path, mtimeMs: st.mtimeMs, size: st.size };
      });
      writeFileSync(`${tmp}.json`, JSON.stringify(inputs));
      renameSync(format === 'cjs' ? `${tmp}.cjs` : `${tmp}.mjs`, file);
      renameSync(`${tmp}.json`, list);
      return file;
    })();
    bundles.set(key, out);
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
