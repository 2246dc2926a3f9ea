// The HTML report in a real browser (Debian's chromium, headless, through playwright-core): the
// page from `mcp-warden report` on a real proxy's log, and the admin port's /report of a live
// proxy. No console error, no request beyond the page itself, the chart drawn, and every number on
// the page equal to what the log says.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { createAdminServer } from '../../src/proxy/admin.ts';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import { LiveReport } from '../../src/report/live.ts';
import type { ReportData } from '../../src/report/model.ts';
import { docsUrl, ruleFix } from '../../src/rules/explain.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { launchChromium, noBrowser } from '../helpers/chromium.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { expectedFromLog, type Expected } from '../helpers/report-expect.ts';
import { driveTraffic, recordTraffic, shipped } from '../helpers/report-traffic.ts';

const skip = noBrowser();
const CLI = await cliArgs();

let dir: string;
let browser: Browser;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'warden-report-browser-'));
  if (!skip) browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Loaded {
  page: Page;
  /** Console errors, page errors and CSP violations. */
  problems: string[];
  /** Every URL the page requested. */
  requests: string[];
  /** The page's numbers by their data-k, as shown. */
  shown: Map<string, string>;
}

async function load(url: string): Promise<Loaded> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(url, { waitUntil: 'load' });
  const pairs = await page.evaluate<Array<[string, string]>>(
    "[...document.querySelectorAll('[data-k]')].map((e) => [e.getAttribute('data-k'), e.textContent.trim()])",
  );
  return { page, problems, requests, shown: new Map(pairs) };
}

/** In the page: whether the chart says it was drawn, and how many of its canvas's pixels are a series' colour. */
const CHART_PIXELS = `(() => {
  const el = document.getElementById('chart');
  const canvas = el.querySelector('canvas');
  if (!canvas) return { drawn: el.dataset.drawn, coloured: 0 };
  const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  let coloured = 0;
  // A pixel whose channels differ much is a series' colour (the grid and the text are grey).
  for (let i = 0; i < data.length; i += 4)
    if (data[i + 3] > 0 && Math.max(data[i], data[i + 1], data[i + 2]) - Math.min(data[i], data[i + 1], data[i + 2]) > 60) coloured++;
  return { drawn: el.dataset.drawn, coloured };
})()`;

const chartDrawn = (page: Page): Promise<{ drawn: string | undefined; coloured: number }> => page.evaluate(CHART_PIXELS);

const count = (n: number): string => n.toLocaleString('en-US');
const pct = (a: number, b: number): string => `${((b === 0 ? 0 : a / b) * 100).toFixed(1)}%`;

function assertPageMatches(shown: Map<string, string>, e: Expected): void {
  assert.equal(shown.get('summary.exchanges'), count(e.exchanges));
  assert.equal(shown.get('summary.errors'), count(e.failed));
  assert.equal(shown.get('summary.errorShare'), pct(e.failed, e.exchanges));
  assert.equal(shown.get('summary.flagged'), count(e.flagged));
  for (const s of ['error', 'warning', 'info'] as const) assert.equal(shown.get(`summary.findings.${s}`), count(e.findings[s]), s);
  for (const [method, m] of e.methods) {
    assert.equal(shown.get(`methods.${method}.exchanges`), count(m.exchanges), method);
    assert.equal(shown.get(`methods.${method}.errors`), count(m.errors), method);
    assert.equal(shown.get(`methods.${method}.errorShare`), pct(m.errors, m.exchanges), method);
  }
  for (const [rule, n] of e.rules) assert.equal(shown.get(`rules.${rule}.count`), count(n), rule);
  for (const [tool, n] of e.tools) assert.equal(shown.get(`tools.${tool}.exchanges`), count(n), tool);
  const rulesShown = [...shown.keys()].filter((k) => /^rules\..*\.count$/.test(k));
  assert.equal(rulesShown.length, e.rules.size, 'no rule on the page that the log does not have');
}

describe('the HTML report in headless Chromium', { skip }, () => {
  test('report.html from a real log: no console error, nothing loaded, the chart drawn, the numbers of the log', async () => {
    const { log, capture } = await recordTraffic(dir, 2);
    const out = join(dir, 'report.html');
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, [...CLI, 'report', log, capture, '-o', out, '--no-progress'], (err) => (err ? reject(err) : resolve())),
    );
    const url = pathToFileURL(out).href;
    const { page, problems, requests, shown } = await load(url);
    try {
      assert.deepEqual(problems, []);
      assert.deepEqual(requests, [url], 'the page needs nothing from the network');
      const chart = await chartDrawn(page);
      assert.equal(chart.drawn, 'true');
      assert.ok(chart.coloured > 200, `${chart.coloured} coloured pixels on the chart`);
      const e = expectedFromLog(log);
      assertPageMatches(shown, e);
      // Each rule on the page links its explanation and shows its fix, on screen (#46).
      for (const rule of e.rules.keys()) {
        const link = page.locator(`a[href="${docsUrl(rule)}"]`).first();
        assert.ok(await link.isVisible(), `${rule} links ${docsUrl(rule)}`);
        assert.equal(await link.textContent(), rule);
        const row = page.locator('tr', { has: link }).first();
        assert.ok((await row.textContent())?.includes(ruleFix(rule)!), `${rule}'s row shows its fix`);
      }
      const shot = await page.locator('#rules').screenshot({ path: join(dir, 'rules.png') });
      assert.ok(shot.length > 1000, 'the rules table, with links and fixes, renders');
      // The what-if: enforce.yaml replayed on the capture.
      assert.ok(Number(shown.get('whatIf.rewrite')) > 0);
      assert.equal(shown.get('whatIf.exchanges'), count(e.exchanges));
    } finally {
      await page.close();
    }
  });

  test("the admin port's /report and /report.json: the live proxy's last hour", async () => {
    const server = await startBrokenServer();
    const report = new LiveReport();
    let proxy: TestProxy | undefined;
    let admin: ReturnType<typeof createAdminServer> | undefined;
    try {
      const audit = await shipped('audit.yaml');
      proxy = await startProxy(server.url, { policy: () => audit, shadow: await shipped('enforce.yaml'), report });
      admin = createAdminServer({ metrics: proxy.metrics, upstream: server.url, readiness: [], report });
      const base = await admin.listen(0, '127.0.0.1');
      await driveTraffic(proxy.url, 1);
      const exchanges = proxy.exchanges();
      const violations = proxy.log.records.filter((r) => r.msg === 'violation');

      const res = await fetch(new URL('/report.json', base));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const data = (await res.json()) as ReportData;
      assert.equal(data.input.tablesFrom, 'live');
      assert.equal(data.summary.exchanges, exchanges.length);
      assert.equal(data.summary.flagged, exchanges.filter((r) => (r.violations as number) > 0).length, 'as the log records count them');
      assert.equal(data.summary.findings.error + data.summary.findings.warning + data.summary.findings.info, violations.length);
      assert.equal(data.whatIf.source, 'shadow');
      assert.match(data.whatIf.policy ?? '', /enforce\.yaml$/);
      assert.equal(
        data.whatIf.byRule.reduce((n, r) => n + (r.actions.rewrite ?? 0) + (r.actions.block ?? 0) + (r.actions.log ?? 0), 0),
        violations.filter((v) => v.shadow !== 'off').length,
        'each shadow decision the log carries',
      );

      const { page, problems, shown } = await load(new URL('/report', base).href);
      try {
        assert.deepEqual(problems, []);
        assert.equal((await chartDrawn(page)).drawn, 'true');
        assert.equal(shown.get('summary.exchanges'), count(exchanges.length));
        assert.match(await page.title(), /the last hour/);
      } finally {
        await page.close();
      }
    } finally {
      await proxy?.close();
      await admin?.close();
      await server.close();
    }
  });
});
