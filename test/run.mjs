// `npm test`'s runner: node's test runner on src/ and test/ compiled to JavaScript, instead of
// `node --import tsx --test`. Under tsx every test process pays tsx's start and every import
// crosses to tsx's hooks thread (on Node 20): ~1-2 s of CPU a process, loading src/ and the test
// files; compiled once (esbuild, ~0.6 s of CPU for all of them, then only what changed) the same
// processes load plain files.
//
//   node test/run.mjs [node --test options] <test files, as .ts paths>
//
// Each file is compiled on its own (imports kept, `./x.ts` becoming `./x.js`) into
// node_modules/.cache/mcp-warden/js-<node>-<hash of how>/, the tree mirrored. Each keeps its
// source's import.meta.url, filename and dirname (test/helpers/source-meta.mjs), so what it finds
// next to itself is what it finds when run from source; inline source maps point stack
// traces and the runner's locations at the .ts sources. Test files that import other test files by
// computed URL (test/shares.ts) read MCP_WARDEN_TEST_JS, the compiled tree's root.
// Child processes that tests start run as they did (bundles, or `--import tsx` sources).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SOURCE_META_DEFINE, sourceMeta } from './helpers/source-meta.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const NAME = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).name;
// How the tree is compiled (this file and the plugin it uses): a change compiles it all again.
const HOW = createHash('sha256')
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .update(readFileSync(fileURLToPath(new URL('./helpers/source-meta.mjs', import.meta.url))))
  .digest('hex')
  .slice(0, 12);
const OUT = join(ROOT, 'node_modules/.cache/mcp-warden', `js-node${process.versions.node}-${HOW}`);
// esbuild is tsx's own dependency (as in test/helpers/bundle.ts): no package of our own to keep in step.
const esbuild = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'))('esbuild');

/** The TypeScript sources under `dir` (not declaration files, not installed packages). */
function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** Where the compiled twin of `source` (an absolute .ts path under ROOT) lives. */
const twin = (source) => join(OUT, relative(ROOT, source)).replace(/\.ts$/, '.js');

/** @param {string} path */
const mtime = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
};

/** Every import stays an import: a relative .ts one names the compiled twin, another relative one the source file. */
const keepImports = {
  name: 'keep-imports',
  setup(build) {
    // The package's own name resolves only from inside the package (not from node_modules/.cache):
    // it is given as its file.
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (/^\.\.?\//.test(args.path)) {
        const path = args.path.endsWith('.ts') ? `${args.path.slice(0, -3)}.js` : pathToFileURL(resolve(args.resolveDir, args.path)).href;
        return { path, external: true };
      }
      if (args.path === NAME || args.path.startsWith(`${NAME}/`)) return { path: import.meta.resolve(args.path), external: true };
      return { path: args.path, external: true };
    });
  },
};

/** Compiles the sources whose twin is missing or older than them; each file is replaced whole (by rename). */
async function compile() {
  const stale = [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'test'))].filter((s) => mtime(twin(s)) < mtime(s));
  if (stale.length === 0) return;
  const result = await esbuild.build({
    entryPoints: stale,
    outdir: OUT,
    outbase: ROOT,
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcesContent: false,
    logLevel: 'error',
    plugins: [keepImports, sourceMeta(/\.ts$/)],
    define: SOURCE_META_DEFINE,
  });
  await esbuild.stop();
  for (const file of result.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
  }
}

await compile();
const args = process.argv.slice(2).map((arg) => (arg.endsWith('.ts') && !arg.startsWith('-') ? twin(resolve(arg)) : arg));
const child = spawn(process.execPath, ['--enable-source-maps', '--test', ...args], {
  stdio: 'inherit',
  env: { ...process.env, MCP_WARDEN_TEST_JS: OUT },
});
// Ctrl-C reaches the runner too (same process group); this one waits for it and ends as it did.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
