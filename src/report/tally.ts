// A table of counters keyed by a string that a peer chooses (a session id, a tool, a client), in
// bounded memory: past `max` keys, the half with the least weight is dropped and counted. The
// kept counts stay exact for keys never dropped; a dropped key that comes back starts again.

export class BoundedTally<T> {
  private readonly rows = new Map<string, T>();
  /** Keys dropped when the table was full. */
  dropped = 0;

  constructor(
    private readonly max: number,
    private readonly create: (key: string) => T,
    private readonly weight: (row: T) => number,
  ) {}

  /** The row for `key`, made on first use. */
  row(key: string): T {
    let row = this.rows.get(key);
    if (row === undefined) {
      if (this.rows.size >= this.max) this.prune();
      row = this.create(key);
      this.rows.set(key, row);
    }
    return row;
  }

  /** The rows, heaviest first, at most `limit`. */
  top(limit: number): T[] {
    return [...this.rows.values()].sort((a, b) => this.weight(b) - this.weight(a)).slice(0, limit);
  }

  get size(): number {
    return this.rows.size;
  }

  private prune(): void {
    const keep = [...this.rows.entries()].sort((a, b) => this.weight(b[1]) - this.weight(a[1])).slice(0, Math.floor(this.max / 2));
    this.dropped += this.rows.size - keep.length;
    this.rows.clear();
    for (const [k, v] of keep) this.rows.set(k, v);
  }
}
