// Counts over time in at most `maxBuckets` buckets whatever the span: buckets start at 10 ms and
// widen along a ladder of round widths, each a multiple of the one before (so merging is exact),
// whenever the span would need more. Order of arrival is free.
import { SEVERITIES, type Severity } from './model.ts';

/** Exchanges, then findings by severity, in SEVERITIES order. */
type Counts = [number, number, number, number];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WIDTHS = [
  10,
  50,
  100,
  500,
  1000,
  5000,
  10_000,
  30_000,
  MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  7 * DAY,
];

/** The next width on the ladder; past its end, doubling. */
const wider = (ms: number): number => WIDTHS.find((w) => w > ms) ?? ms * 2;

export class Timeline {
  private bucketMs = WIDTHS[0]!;
  private readonly buckets = new Map<number, Counts>();
  private min = Number.POSITIVE_INFINITY;
  private max = Number.NEGATIVE_INFINITY;

  constructor(private readonly maxBuckets = 120) {}

  exchange(time: number): void {
    this.at(time)[0]++;
  }

  finding(time: number, severity: Severity): void {
    this.at(time)[1 + SEVERITIES.indexOf(severity)]!++;
  }

  private at(time: number): Counts {
    this.min = Math.min(this.min, time);
    this.max = Math.max(this.max, time);
    while (Math.floor(this.max / this.bucketMs) - Math.floor(this.min / this.bucketMs) >= this.maxBuckets) this.widen();
    const key = Math.floor(time / this.bucketMs);
    let counts = this.buckets.get(key);
    if (!counts) this.buckets.set(key, (counts = [0, 0, 0, 0]));
    return counts;
  }

  /** The next width: the buckets that fall into one wider bucket are added together. */
  private widen(): void {
    const factor = wider(this.bucketMs) / this.bucketMs;
    this.bucketMs *= factor;
    const old = [...this.buckets.entries()];
    this.buckets.clear();
    for (const [key, counts] of old) {
      const to = Math.floor(key / factor);
      const merged = this.buckets.get(to);
      if (merged) for (let i = 0; i < 4; i++) merged[i]! += counts[i]!;
      else this.buckets.set(to, counts);
    }
  }

  /** Every bucket from the first to the last (empty ones as zeros), as the chart draws them. */
  data(): { start: number; bucketMs: number; exchanges: number[]; findings: Record<Severity, number[]> } {
    const findings = { error: [] as number[], warning: [] as number[], info: [] as number[] };
    const exchanges: number[] = [];
    if (this.buckets.size === 0) return { start: 0, bucketMs: this.bucketMs, exchanges, findings };
    const first = Math.floor(this.min / this.bucketMs);
    const last = Math.floor(this.max / this.bucketMs);
    for (let key = first; key <= last; key++) {
      const counts = this.buckets.get(key) ?? [0, 0, 0, 0];
      exchanges.push(counts[0]);
      SEVERITIES.forEach((s, i) => {
        findings[s].push(counts[1 + i]!);
      });
    }
    return { start: first * this.bucketMs, bucketMs: this.bucketMs, exchanges, findings };
  }
}
