// Tool catalogues shared between sessions. Most sessions of one server list the same tools, and a
// catalogue can be hundreds of KiB (input schemas): each distinct one is held once, found by the
// digest of its contents, and the total is bounded. A catalogue dropped past the bound is taken
// back from every session that used it (they then know no tools, so no rule guesses from it).
import { createHash } from 'node:crypto';

export interface Tool {
  name: string;
  inputSchema: unknown;
  /** 2025-06-18+: what structuredContent must validate against. */
  outputSchema?: unknown;
  /** Its title and description, when strings: what it says it does (read by silent-success). */
  title?: string;
  description?: string;
  /** A digest of each field of the tool's definition (description, schemas, annotations...): what drift compares. */
  fields?: Readonly<Record<string, string>>;
}

export interface Catalogue {
  readonly digest: string;
  readonly tools: ReadonlyMap<string, Tool>;
  /** Size of its JSON text: what the bound counts. */
  readonly bytes: number;
}

/** What a catalogue is taken back from when it is dropped. */
export interface CatalogueHolder {
  catalogue?: Catalogue;
}

export class CatalogueStore {
  /** Oldest use first. */
  private readonly byDigest = new Map<string, { catalogue: Catalogue; holders: Set<CatalogueHolder> }>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    /** Called for each dropped catalogue, with the holders it was taken from (before they forget it). */
    private readonly onDrop: (catalogue: Catalogue, holders: ReadonlySet<CatalogueHolder>) => void,
  ) {}

  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.byDigest.size;
  }

  /**
   * The shared catalogue with these tools (stored on first sight), now held by `holder`; undefined
   * when the tools cannot be serialised to digest (too deep), so the caller keeps its own copy.
   */
  share(tools: Map<string, Tool>, holder: CatalogueHolder): Catalogue | undefined {
    let text: string;
    try {
      text = JSON.stringify([...tools.values()]);
    } catch {
      return undefined;
    }
    const digest = createHash('sha256').update(text).digest('base64url');
    let entry = this.byDigest.get(digest);
    if (entry) this.byDigest.delete(digest);
    else {
      entry = { catalogue: { digest, tools, bytes: text.length }, holders: new Set() };
      this.total += text.length;
    }
    this.byDigest.set(digest, entry);
    this.release(holder);
    entry.holders.add(holder);
    holder.catalogue = entry.catalogue;
    this.trim(digest);
    return holder.catalogue;
  }

  /** `holder` no longer uses its catalogue (a new tools/list, or the session ended). */
  release(holder: CatalogueHolder): void {
    const held = holder.catalogue;
    if (!held) return;
    holder.catalogue = undefined;
    const entry = this.byDigest.get(held.digest);
    entry?.holders.delete(holder);
    if (entry && entry.holders.size === 0) this.forget(held.digest, entry.catalogue);
  }

  /** Drops the least recently shared catalogues (never `keep`) until the total fits. */
  private trim(keep: string): void {
    for (const [digest, entry] of this.byDigest) {
      if (this.total <= this.maxBytes) return;
      if (digest === keep) continue;
      this.forget(digest, entry.catalogue);
      this.onDrop(entry.catalogue, entry.holders);
      for (const holder of entry.holders) holder.catalogue = undefined;
    }
  }

  private forget(digest: string, catalogue: Catalogue): void {
    this.byDigest.delete(digest);
    this.total -= catalogue.bytes;
  }
}
