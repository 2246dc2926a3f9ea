// A Map bounded in size and idle time: touching an entry makes it the newest; inserting past the
// limit evicts the oldest; sweep() evicts the idle ones. Evictions are reported, never silent.

export class BoundedMap<K, V> {
  private readonly entries = new Map<K, { value: V; touched: number }>();

  constructor(
    private readonly maxEntries: number,
    private readonly idleMs: number,
    private readonly onEvict: (key: K, value: V, why: 'capacity' | 'idle') => void = () => {},
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K, now: number): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    entry.touched = now;
    this.entries.set(key, entry);
    return entry.value;
  }

  /** The keys, oldest first (an entry may be deleted while they are read). */
  keys(): IterableIterator<K> {
    return this.entries.keys();
  }

  /** Looks without touching (for reads that are not use). */
  peek(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: K, value: V, now: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, touched: now });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      const evicted = this.entries.get(oldest.value)!;
      this.entries.delete(oldest.value);
      this.onEvict(oldest.value, evicted.value, 'capacity');
    }
  }

  delete(key: K): V | undefined {
    const entry = this.entries.get(key);
    this.entries.delete(key);
    return entry?.value;
  }

  /** Evicts entries idle longer than idleMs. Oldest entries come first, so it stops early. */
  sweep(now: number): void {
    for (const [key, entry] of this.entries) {
      if (now - entry.touched < this.idleMs) break;
      this.entries.delete(key);
      this.onEvict(key, entry.value, 'idle');
    }
  }
}
