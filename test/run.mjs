// `npm test`'s runner: node's test runner on src/ and test/ compiled to JavaScript, instead of
// `node --import tsx --test`. Under tsx every test process pays tsx's start and every import
// crosses to tsx's hooks thread (on Node 20): ~1-2 s of CPU a process, loading src/ and the test
// files; compiled once (esbuild, ~0.6 s of CPU for all of them, then only what changed) the same
// processes load plain files.
//
//   node test/run.mjs [--checks] [node --test options] <test files, as .ts paths>
//
// The files start in the order given (node's runner alone would start them in the order of their
// paths).
//
// Each file is compiled on its own (imports kept, `./x.ts` becoming `./x.js`) into
// node_modules/.cache/mcp-warden/js-<node>-<hash of how>/, the tree mirrored. Each keeps its
// source's import.meta.url, filename and dirname (test/helpers/source-meta.mjs), so what it finds
// next to itself is what it finds when run from source; inline source maps point stack traces and
// the runner's locations at the .ts sources. A file is compiled again when its size or
// modification time is not what it was when last compiled; a compiled file whose source is gone
// is removed. Tests that import a test file by computed URL (test/shares.ts), or run the CLI
// module for module (test/helpers/compiled.ts), read MCP_WARDEN_TEST_JS, the compiled tree's root.
//
// --checks: the type-check and the lint (`npm run typecheck`, `npm run lint`) run alongside the
// tests instead of before them: the type-check keeps one core for ~5-15 s, during which the tests
// use the other. Their output is printed after the tests' only when they fail, and so is the exit code.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SOURCE_META_DEFINE, sourceMeta } from './helpers/source-meta.mjs';

if (process.env.MCP_WARDEN_TEST_JS) {
  // node --test, run without files, looks for them itself and would find this file again.
  console.error('test/run.mjs runs the test runner; it is not a test file');
  process.exit(2);
}
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const NAME = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).name;
// esbuild is tsx's own dependency (as in test/helpers/bundle.ts): no package of our own to keep in step.
const esbuild = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'))('esbuild');
// How the tree is compiled (this file, the plugin it uses, esbuild, the tsconfig esbuild reads):
// a change compiles it all again, into another directory.
const HOW = createHash('sha256')
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .update(readFileSync(fileURLToPath(new URL('./helpers/source-meta.mjs', import.meta.url))))
  .update(esbuild.version)
  .update(readFileSync(join(ROOT, 'tsconfig.json')))
  .digest('hex')
  .slice(0, 12);
const CACHE = join(ROOT, 'node_modules/.cache/mcp-warden');
const TREE = `js-node${process.versions.node}-`;
const OUT = join(CACHE, `${TREE}${HOW}`);
/** What each source was (size, modification time) when compiled last: `{ [path from ROOT]: [mtimeMs, size] }`. */
const MANIFEST = join(OUT, 'sources.json');

/** The TypeScript sources under `dir` (not declaration files, not installed packages), from ROOT. */
function* sources(dir) {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** Where the compiled twin of `source` (a .ts path from ROOT) lives. */
const twin = (source) => join(OUT, source.replace(/\.ts$/, '.js'));

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

/** `path`'s JSON, or `fallback` when it is missing or unreadable. */
const readJson = (path, fallback) => {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return fallback;
  }
};

/** Writes `contents` to `path` whole: by rename, so a reader gets one version or the other. */
function replace(path, contents) {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}

/**
 * Compiles what changed since it was compiled (its size and modification time read before the
 * build, so that an edit during it is seen next time), removes the twins of deleted sources, and
 * the trees another way of compiling left for this node.
 */
async function compile() {
  for (const name of existsSync(CACHE) ? readdirSync(CACHE) : []) {
    if (name.startsWith(TREE) && join(CACHE, name) !== OUT) rmSync(join(CACHE, name), { recursive: true, force: true });
  }
  const before = readJson(MANIFEST, {});
  const now = {};
  for (const source of [...sources('src'), ...sources('test')]) {
    const st = statSync(join(ROOT, source));
    now[source] = [st.mtimeMs, st.size];
  }
  for (const gone of Object.keys(before).filter((source) => !(source in now))) rmSync(twin(gone), { force: true });
  const stale = Object.keys(now).filter((s) => before[s]?.[0] !== now[s][0] || before[s]?.[1] !== now[s][1] || !existsSync(twin(s)));
  if (stale.length > 0) {
    const result = await esbuild.build({
      entryPoints: stale.map((source) => join(ROOT, source)),
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
    for (const file of result.outputFiles) replace(file.path, file.contents);
  }
  if (stale.length > 0 || Object.keys(before).length !== Object.keys(now).length) replace(MANIFEST, JSON.stringify(now));
}

/** `npm run <script> --silent`, its output kept: resolves with its exit code and what it printed. */
function check(script) {
  return new Promise((done) => {
    const child = spawn('npm', ['run', script, '--silent'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (err) => done({ script, code: 1, output: String(err) }));
    child.on('exit', (code) => done({ script, code: code ?? 1, output }));
  });
}

/**
 * The files to give the runner, which starts them in the order of their paths: for each file
 * given, `<OUT>/start-<hash of the list>/<nn>-<name>.js`, which imports its compiled twin, so
 * they start in the order given (the long ones first: the last to start is not the last to end).
 */
function inOrder(files) {
  const dir = join(OUT, `start-${createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 12)}`);
  return files.map((file, i) => {
    const entry = join(dir, `${String(i).padStart(3, '0')}-${basename(file)}`);
    if (!existsSync(entry)) replace(entry, `import ${JSON.stringify(pathToFileURL(file).href)};\n`);
    return entry;
  });
}

const argv = process.argv.slice(2);
const withChecks = argv.includes('--checks');
const args = argv.filter((arg) => arg !== '--checks');
const isFile = (arg) => arg.endsWith('.ts') && !arg.startsWith('-');
if (!args.some(isFile)) {
  console.error('usage: node test/run.mjs [--checks] [node --test options] <test files (.ts)>');
  process.exit(2);
}
const checks = withChecks ? Promise.all([check('typecheck'), check('lint')]) : Promise.resolve([]);
await compile();
const files = inOrder(args.filter(isFile).map((arg) => twin(relative(ROOT, resolve(arg)))));
const child = spawn(process.execPath, ['--enable-source-maps', '--test', ...args.filter((arg) => !isFile(arg)), ...files], {
  stdio: 'inherit',
  env: { ...process.env, MCP_WARDEN_TEST_JS: OUT },
});
// Ctrl-C reaches the runner too (same process group); this one waits for it and ends as it did.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', async (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  const failed = (await checks).filter((c) => c.code !== 0);
  for (const c of failed) console.error(`\n✖ npm run ${c.script} failed (exit ${c.code}):\n${c.output.trimEnd()}`);
  process.exit(code || (failed.length > 0 ? 1 : 0));
});
