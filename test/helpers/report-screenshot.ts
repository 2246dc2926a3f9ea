// Makes the README's picture of the HTML report: real traffic through the real proxy (spread over
// ~20 s so the chart has a shape), `mcp-warden report` on its log and capture, and headless
// Chromium's screenshot of the page's top. `node --import tsx test/helpers/report-screenshot.ts docs/report.png`
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { launchChromium } from './chromium.ts';
import { recordTraffic } from './report-traffic.ts';

const out = resolve(process.argv[2] ?? 'docs/report.png');
const dir = mkdtempSync(join(tmpdir(), 'warden-screenshot-'));
try {
  await recordTraffic(dir, 5, 200);
  const html = join(dir, 'report.html');
  const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
  // Run where the files are, so the page names them as a user would see them.
  const tsx = import.meta.resolve('tsx');
  execFileSync(process.execPath, ['--import', tsx, cli, 'report', 'proxy.log', 'capture.jsonl', '-o', html, '--no-progress'], {
    stdio: 'inherit',
    cwd: dir,
  });
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 }, deviceScaleFactor: 1 });
  await page.goto(pathToFileURL(html).href);
  await page.screenshot({ path: out });
  await browser.close();
  process.stdout.write(`${out}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
