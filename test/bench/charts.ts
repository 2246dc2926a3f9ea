// Draws each curve (curves.ts) as a PNG: a page of uPlot charts (the report's chart library,
// inlined) opened in Debian's headless chromium, each chart's element screenshotted. Without a
// browser the tables still carry every number; the run says the pictures were not redrawn.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chartAssets } from '../../src/report/assets.ts';
import { chromiumPath, launchChromium } from '../helpers/chromium.ts';
import { CURVE_SETUPS, type Curve } from './curves.ts';

const COLOURS: Record<(typeof CURVE_SETUPS)[number], string> = {
  direct: '#7f7f7f',
  'http-proxy-3': '#1f77b4',
  audit: '#2ca02c',
  enforce: '#d62728',
};
const WIDTH = 720;
const HEIGHT = 360;

/** The data uPlot draws: x values, then one series per setup (CPU µs per exchange, every process on the path). */
function seriesOf(curve: Curve): { xs: number[]; ys: (number | null)[][] } {
  const xs = [...new Set(curve.points.map((p) => p.x))].sort((a, b) => a - b);
  const ys = CURVE_SETUPS.map((setup) => xs.map((x) => curve.points.find((p) => p.x === x && p.setup === setup)?.allUs ?? null));
  return { xs, ys };
}

function page(curves: Curve[]): string {
  const { script, style } = chartAssets();
  const charts = curves.map((c, i) => ({ id: `chart-${i}`, title: c.title, xLabel: c.xLabel, ...seriesOf(c) }));
  // Inline data: the page is opened from a file, with no network.
  const draw = `
    const charts = ${JSON.stringify(charts)};
    const setups = ${JSON.stringify(CURVE_SETUPS)};
    const colours = ${JSON.stringify(COLOURS)};
    for (const c of charts) {
      const el = document.getElementById(c.id);
      new uPlot({
        title: c.title, width: ${WIDTH}, height: ${HEIGHT},
        scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
        padding: [null, 48, null, null],
        axes: [{ label: c.xLabel }, { label: 'CPU µs per exchange, all processes', size: 70 }],
        series: [{ label: c.xLabel }, ...setups.map((s) => ({ label: s, stroke: colours[s], width: 2, points: { size: 6 } }))],
        legend: { show: true, live: false },
      }, [c.xs, ...c.ys], el);
    }`;
  return `<!doctype html><html><head><meta charset="utf-8"><style>${style} body{margin:0;background:#fff;font-family:sans-serif} .c{display:inline-block;padding:8px}</style></head><body>${charts.map((c) => `<div class="c" id="${c.id}"></div>`).join('')}<script>${script}</script><script>${draw}</script></body></html>`;
}

/** Writes `<dir>/<curve id>.png` for each curve; returns the files written (none without chromium). */
export async function drawCharts(curves: Curve[], dir: string, log: (line: string) => void): Promise<string[]> {
  if (!chromiumPath()) {
    log('charts: chromium is not installed (apt-get install chromium): the PNG charts are not redrawn');
    return [];
  }
  const work = join(tmpdir(), `warden-charts-${process.pid}`);
  mkdirSync(work, { recursive: true });
  mkdirSync(dir, { recursive: true });
  const browser = await launchChromium();
  try {
    const html = join(work, 'charts.html');
    writeFileSync(html, page(curves));
    const tab = await browser.newPage({ viewport: { width: WIDTH + 40, height: HEIGHT + 120 }, deviceScaleFactor: 1 });
    await tab.goto(pathToFileURL(html).href);
    const written: string[] = [];
    for (const [i, curve] of curves.entries()) {
      const file = join(dir, `${curve.id}.png`);
      await tab.locator(`#chart-${i}`).screenshot({ path: file });
      written.push(file);
    }
    return written;
  } finally {
    await browser.close();
    rmSync(work, { recursive: true, force: true });
  }
}
