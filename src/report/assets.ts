// The chart library inlined into every report (uPlot: small, no dependencies, MIT), read once from
// its package: the page needs no network to be viewed.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

let cached: { script: string; style: string } | undefined;

export function chartAssets(): { script: string; style: string } {
  if (!cached) {
    const require = createRequire(import.meta.url);
    const read = (file: string) => readFileSync(require.resolve(`uplot/dist/${file}`), 'utf8');
    cached = { script: read('uPlot.iife.min.js'), style: read('uPlot.min.css') };
  }
  return cached;
}
