// Where a test finds our TypeScript as the process runs it: from source (under tsx), or compiled by
// test/run.mjs (`npm test`), which sets MCP_WARDEN_TEST_JS to the compiled tree's root (the
// repository's tree mirrored, each .ts file a .js twin).
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COMPILED = process.env.MCP_WARDEN_TEST_JS;

/** The URL to import for `source` (a .ts file of the repository): its compiled twin under test/run.mjs. */
export function moduleUrl(source: URL): string {
  if (!COMPILED) return source.href;
  return pathToFileURL(join(COMPILED, relative(ROOT, fileURLToPath(source)).replace(/\.ts$/, '.js'))).href;
}

/** `url` as the .ts source it was compiled from, if it is a compiled twin; else as it is. */
export function sourceUrl(url: string): string {
  if (!COMPILED) return url;
  if (!url.startsWith(`${pathToFileURL(COMPILED).href}/`)) return url;
  return pathToFileURL(join(ROOT, relative(COMPILED, fileURLToPath(url)).replace(/\.js$/, '.ts'))).href;
}

/** The arguments after `node` that run `entry` (a .ts path from the repository's root) from its sources, not bundled. */
export function sourceArgs(entry: string): string[] {
  return COMPILED ? [fileURLToPath(moduleUrl(pathToFileURL(join(ROOT, entry))))] : ['--import', 'tsx', join(ROOT, entry)];
}
