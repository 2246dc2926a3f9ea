// Compiles the benchmark's child processes (the proxy under test and the upstreams) to plain
// JavaScript before they run, so no TypeScript loader sits in their memory or on their CPU: tsx
// keeps esbuild in a worker thread of every process it loads, ~50 MB of RSS that is not the
// proxy's. esbuild (tsx's own) bundles our sources; packages stay external, resolved from
// node_modules as in production.
import { build } from 'esbuild';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Inside node_modules so the bundles resolve packages from the project's node_modules. */
export const OUT_DIR = `${ROOT}node_modules/.cache/warden-bench`;

export const CHILDREN = ['proxy-child', 'upstream', 'sdk-stdio-server'] as const;

/** Each child's source: the bench's own, or a fixture run as a child (the SDK server over stdio, behind mcp-proxy). */
const SOURCES: Record<(typeof CHILDREN)[number], string> = {
  'proxy-child': 'test/bench/proxy-child.ts',
  upstream: 'test/bench/upstream.ts',
  'sdk-stdio-server': 'test/fixtures/sdk-stdio-server.ts',
};

/** Builds every child; returns the path of each bundle by name. */
export async function buildChildren(): Promise<Record<(typeof CHILDREN)[number], string>> {
  mkdirSync(OUT_DIR, { recursive: true });
  const out = {} as Record<(typeof CHILDREN)[number], string>;
  // Split into chunks so a child loads only what it imports (a dynamic import stays lazy). Chunks
  // are named by content hash and old ones are kept, so an older .cpuprofile still maps to source.
  await build({
    // Named entries: each bundle is <name>.mjs at the top of OUT_DIR, wherever its source is.
    entryPoints: CHILDREN.map((name) => ({ in: `${ROOT}${SOURCES[name]}`, out: name })),
    outdir: OUT_DIR,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
  });
  for (const name of CHILDREN) out[name] = `${OUT_DIR}/${name}.mjs`;
  return out;
}
