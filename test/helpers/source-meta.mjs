// A module that esbuild bundles, or compiles to another directory, keeps its source file's
// import.meta.url, filename and dirname: what it finds next to itself (fixtures, package.json,
// config/, a package's own files) is what it finds when run in place. esbuild's `define` turns them
// (in code, never inside strings) into names that each such file declares on its first line, in
// place of a shebang, so that every other line keeps its number for the source map.
// Plain JavaScript: test/run.mjs uses it before anything can load TypeScript.
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';

/** esbuild's `define` for the names sourceMeta() declares. */
export const SOURCE_META_DEFINE = {
  'import.meta.url': '__source_url',
  'import.meta.filename': '__source_filename',
  'import.meta.dirname': '__source_dirname',
};

/** An esbuild plugin: the files matching `filter` (TypeScript or JavaScript) that use import.meta declare their source's. */
export function sourceMeta(filter) {
  return {
    name: 'source-meta',
    setup(build) {
      build.onLoad({ filter }, async ({ path }) => {
        const text = await readFile(path, 'utf8');
        if (!text.includes('import.meta')) return undefined;
        const meta = `const __source_url = ${JSON.stringify(pathToFileURL(path).href)}, __source_filename = ${JSON.stringify(path)}, __source_dirname = ${JSON.stringify(dirname(path))};`;
        const body = text.startsWith('#!') ? text.slice(text.indexOf('\n')) : text;
        return { contents: meta + body, loader: /\.[cm]?ts$/.test(path) ? 'ts' : 'js' };
      });
    },
  };
}
