// Counts over time in at most `maxBuckets` buckets whatever the span: buckets start at one second
// and double in width (merging pairs) whenever the span would need more. Order of arrival is free.
import { SEVERITIES, type Severity } from './model.ts';

/** Exchanges, then findings by severity, in SEVERITIES order. */
type Counts = [number, number, number, number];

export class Timeline {
  private bucketMs = 1000;
  private readonly buckets = new Map<number, Counts>();
  private min = Number.POSITIVE_INFINITY;
  private max = Number.NEGATIVE_INFINITY;

  constructor(private readonly maxBuckets = 600) {}

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

  /** Doubles the bucket width, adding each pair of buckets into one. */
  private widen(): void {
    this.bucketMs *= 2;
    const old = [...this.buckets.entries()];
    this.buckets.clear();
    for (const [key, counts] of old) {
      const merged = this.buckets.get(Math.floor(key / 2));
      if (merged) for (let i = 0; i < 4; i++) merged[i]! += counts[i]!;
      else this.buckets.set(Math.floor(key / 2), counts);
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
      SEVERITIES.forEach((s, i) => findings[s].push(counts[1 + i]!));
    }
    return { start: first * this.bucketMs, bucketMs: this.bucketMs, exchanges, findings };
  }
}
