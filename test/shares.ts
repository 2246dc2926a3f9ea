// `npm test` runs most test files several to a process instead of one each: a process costs
// ~0.5-1.5 s of CPU to start (node, the test runner's child, loading src/ and the SDK again; more
// under tsx), more than most files take to run. Every test still
// runs and reports as before (same counts in the summary); `npm run test:unit`,
// `test:integration` and `test:watch` still run the files one by one.
//
// - test/unit.test.ts: every test/unit/*.test.ts but the *.property.test.ts files, which
//   test/properties.test.ts runs in a process of their own, at an eighth of their runs (the slow
//   tier's test/slow/properties.test.ts runs them at twice).
// - test/shared-<n>.test.ts: share n of the test/integration/*.test.ts files, balanced by their
//   measured cost (share() below), where `shares` is how many of those entry files there are; except
//   the files package.json's "test:run" script names itself, which keep a process of their own:
//   the ones that measure their process's heap (faults-client, faults-upstream, compression) and
//   the long ones (conformance, precision-corpus, production-install).
//
// test/run.mjs starts files in the order the script names them: the shares (the longest) first,
// with the unit share; the property tests and the files with a process of their own take the slot
// the unit share leaves. Four at a time (--test-concurrency=4) on two cores: a share spends much of
// its time waiting on sockets, timeouts and child processes, and the fourth file uses the cores
// meanwhile (three at a time: 86-100 s a run; four: 82-88 s, measured under tsx on 2026-12-06).
//
// Sharing a process is safe for files whose tests only use what they start (servers on port 0,
// temporary directories) and close it in their hooks. Hooks at a file's top level become hooks of
// the shared process: before() runs before the first test of the share, after() after its last,
// afterEach() after every test of the share. A file that cannot share: name it in the script.
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { moduleUrl } from './helpers/compiled.ts';

const TEST = new URL('./', import.meta.url);
/** A share's entry file in test/, and its number. */
export const SHARE_ENTRY = /^shared-(\d+)\.test\.ts$/;
const UNIT = new URL('./unit/', TEST);
const INTEGRATION = new URL('./integration/', TEST);

/** The unit test files test/unit.test.ts runs: all but the property tests. */
export function unitShare(): string[] {
  return readdirSync(UNIT)
    .filter((name) => name.endsWith('.test.ts') && !name.endsWith('.property.test.ts'))
    .sort();
}

/** Imports (and so runs) the unit test files of test/unit.test.ts. */
export async function runUnitShare(): Promise<void> {
  for (const name of unitShare()) await import(moduleUrl(new URL(name, UNIT)));
}

/** The property test files (test/unit/*.property.test.ts). */
export function propertyFiles(): string[] {
  return readdirSync(UNIT)
    .filter((name) => name.endsWith('.property.test.ts'))
    .sort();
}

/**
 * Imports (and so runs) every property test file in this process, each property's runs scaled by
 * `multiplier` unless PROPERTY_RUNS_MULTIPLIER says otherwise (test/helpers/arbitraries.ts reads it
 * when first imported, here).
 */
export async function runProperties(multiplier: number): Promise<void> {
  process.env.PROPERTY_RUNS_MULTIPLIER ||= String(multiplier);
  for (const name of propertyFiles()) await import(moduleUrl(new URL(name, UNIT)));
}

/** The integration files package.json's "test:run" script names one by one (a process each). */
export function ownProcess(): Set<string> {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', TEST), 'utf8')) as { scripts: Record<string, string> };
  return new Set([...pkg.scripts['test:run']!.matchAll(/test\/integration\/([\w.-]+\.test\.ts)/g)].map((m) => m[1]!));
}

/** The share entry files (test/shared-<n>.test.ts), by n. */
export function shareEntries(): number[] {
  return readdirSync(TEST)
    .map((name) => SHARE_ENTRY.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * The integration files of share `n` of `count`, balanced by what each cost in a measured run
 * (test/shares-cost.json, written by test/cost-reporter.mjs): the costliest first, each to the
 * share with the least so far (a file not measured counts as the median one). Every file lands in
 * exactly one share, the same one on every run while the table stays as it is; a stale table only
 * balances less well.
 */
export function share(n: number, count: number): string[] {
  const own = ownProcess();
  const shared = readdirSync(INTEGRATION)
    .filter((name) => name.endsWith('.test.ts') && !own.has(name))
    .sort();
  const measured = JSON.parse(readFileSync(new URL('./shares-cost.json', TEST), 'utf8')) as Record<string, number>;
  const known = Object.values(measured).sort((a, b) => a - b);
  const typical = known[Math.floor(known.length / 2)] ?? 1;
  const cost = (name: string): number => measured[name] ?? typical;
  const byCost = [...shared].sort((a, b) => cost(b) - cost(a) || (a < b ? -1 : 1));
  const loads = new Array<number>(count).fill(0);
  const files: string[][] = loads.map(() => []);
  for (const name of byCost) {
    const least = loads.indexOf(Math.min(...loads));
    loads[least]! += cost(name);
    files[least]!.push(name);
  }
  return files[n - 1]!.sort();
}

/** Imports (and so runs) the files of the share whose entry is `entryUrl`. */
export async function runShare(entryUrl: string): Promise<void> {
  const n = Number(SHARE_ENTRY.exec(basename(fileURLToPath(entryUrl)))?.[1]);
  const entries = shareEntries();
  if (!entries.includes(n) || entries.some((m, i) => m !== i + 1)) {
    throw new Error(`share entries must be test/shared-1.test.ts ... shared-<count>.test.ts; found ${entries.join(', ')} (this one ${n})`);
  }
  for (const name of share(n, entries.length)) await import(moduleUrl(new URL(name, INTEGRATION)));
}
