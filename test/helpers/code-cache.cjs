// Runs a CommonJS bundle (test/helpers/bundle.ts) with V8's code cache, for a program the tests
// start many times: compiling the CLI's bundle (~4.7 MB) and the functions its start calls took
// ~0.1-0.15 s of a start's ~0.4 s of CPU. Node 22 does this itself (module.enableCompileCache());
// Node 20 has only vm.Script's cachedData, used here.
//
// The cache sits next to the bundle, named by the build (the bundle's first line, `// build <id>`)
// and the V8 version: V8 checks a cache against its source's length only, so a cache is never
// looked up for another build's code (a file without that line runs uncached). A process that
// found none, or one V8 refused, writes it if it lives a second (by then the functions its start
// called are compiled, and so in it), and removes the caches of other builds; files are replaced
// by rename, so a process reads one whole cache or none.
'use strict';
const { isAscii } = require('node:buffer');
const { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { basename, dirname, join } = require('node:path');
const { Script } = require('node:vm');

/** Runs `file` (a CommonJS bundle) as this process's program, as node would, but from its code cache. */
exports.run = function run(file) {
  // Read as bytes, decoded as Latin-1 when they are ASCII (bundle.ts makes them so): node's UTF-8
  // reading took ~30-70 ms for the CLI's 4.7 MB, this ~1 ms.
  const bytes = readFileSync(file);
  const source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  const build = /^\/\/ build (\w+)/.exec(source)?.[1];
  const cacheFile = `${file}.${build}.v8-${process.versions.v8}.cache`;
  let cachedData;
  try {
    if (build) cachedData = readFileSync(cacheFile);
  } catch {
    // none yet: this process writes it
  }
  const script = new Script(Module.wrap(source), { filename: file, cachedData });
  if (build && (cachedData === undefined || script.cachedDataRejected)) {
    const write = () => {
      const tmp = `${cacheFile}.${process.pid}`;
      try {
        writeFileSync(tmp, script.createCachedData());
        renameSync(tmp, cacheFile);
        for (const name of readdirSync(dirname(file))) {
          if (name.startsWith(`${basename(file)}.`) && name.endsWith('.cache') && name !== basename(cacheFile))
            rmSync(join(dirname(file), name), { force: true });
        }
      } catch {
        // a cache is an optimisation: without it the next start compiles
      }
    };
    setTimeout(write, 1000).unref();
  }
  const bundle = new Module(file, null);
  bundle.filename = file;
  bundle.paths = Module._nodeModulePaths(dirname(file));
  script.runInThisContext()(bundle.exports, Module.createRequire(file), bundle, file, dirname(file));
};
