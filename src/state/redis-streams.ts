// Legacy HTTP+SSE streams in a fleet (`--state redis://` with `--peer-address`): which replica
// holds each legacy session's GET stream, and where it takes the POSTs the others forward to it
// (proxy/peers.ts). A replica writes each stream it holds to PREFIX + `legacy:<key>` (and
// `legacy-name:<session parameter>`) and publishes it on PREFIX + `streams`; the others learn it
// as it comes, and one that missed it (it started later, its subscription dropped) reads the keys
// when a POST names a session it does not know: one round trip, within --state-timeout.
// The keys expire STREAM_TTL_MS after their last write: the holder writes them again every
// REFRESH_MS while the stream is open (which also writes them once Redis is back after an
// outage), so a replica that dies leaves nothing behind for long; a stream's end deletes them.
import type { Server } from 'node:http';
import type { LegacyPeers, PeerAddress } from '../proxy/peers.ts';
import type { LegacySessions, LegacyStreamFact } from '../transport/legacy-sse.ts';
import { redactTarget } from '../sinks/redact.ts';
import { PREFIX, type RedisState } from './redis-state.ts';
import { PEER_BOUNDS } from '../config/defaults.ts';
import { MAX_KEY_CHARS, parseJson } from './validate.ts';

const REFRESH_MS = PEER_BOUNDS.streamRefreshMs;
const STREAM_TTL_MS = PEER_BOUNDS.streamTtlMs;

/** A stream as the store holds and publishes it: the fact, the replica holding it, where that replica takes forwarded POSTs. */
export interface HeldStream {
  fact: LegacyStreamFact;
  holder: string;
  address: PeerAddress;
}

const pathKey = (key: string): string => `${PREFIX}legacy:${key}`;
const nameKey = (named: string): string => `${PREFIX}legacy-name:${named}`;

/** A host name or address (255 characters at most, RFC 1035); a replica's id and token are far shorter than their bound. */
const MAX_HOST_CHARS = PEER_BOUNDS.hostChars;
const MAX_ID_CHARS = PEER_BOUNDS.idChars;

const text = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

/** A PeerAddress as a replica publishes it: a host, a TCP port (1-65535) and a token, or undefined for anything else. */
export function isPeerAddress(v: unknown): v is PeerAddress {
  const a = v as Partial<PeerAddress> | null;
  return (
    typeof a === 'object' &&
    a !== null &&
    text(a.host, MAX_HOST_CHARS) &&
    Number.isInteger(a.port) &&
    a.port! >= 1 &&
    a.port! <= 65_535 &&
    text(a.token, MAX_ID_CHARS)
  );
}

/** A HeldStream read from the store or a publication, or undefined for anything else. */
export function parseHeldStream(json: string | null | undefined): HeldStream | undefined {
  const v = parseJson(json) as Partial<HeldStream> | null | undefined;
  const fact = v?.fact;
  const kind = fact?.kind;
  if ((kind !== 'open' && kind !== 'end') || !text(fact?.key, MAX_KEY_CHARS) || !text(v?.holder, MAX_ID_CHARS)) return undefined;
  if (kind === 'open' && (!text(fact.path, MAX_KEY_CHARS) || (fact.named !== undefined && !text(fact.named, MAX_KEY_CHARS))))
    return undefined;
  return isPeerAddress(v?.address) ? (v as HeldStream) : undefined;
}

export class RedisStreams {
  /** The streams this replica holds, as written: their keys and the text they hold. */
  private readonly held = new Map<string, { keys: string[]; text: string }>();
  /** Another replica's stream: it opened or ended (published), or was read from the store (locate). */
  onStream: (stream: HeldStream) => void = () => {};
  private readonly refresh: NodeJS.Timeout;

  constructor(
    private readonly store: RedisState,
    private readonly address: PeerAddress,
  ) {
    store.hear('streams', (text) => {
      const stream = parseHeldStream(text);
      if (stream) this.onStream(stream);
      else store.malformed.report('subscribe', 'a legacy stream of the wrong shape');
    });
    this.refresh = setInterval(() => this.rewrite(), REFRESH_MS);
    this.refresh.unref();
  }

  /** A stream this replica holds opened or ended: written (or deleted) and published. */
  share(fact: LegacyStreamFact): void {
    const text = JSON.stringify({ fact, holder: this.store.id, address: this.address } satisfies HeldStream);
    const held = this.held.get(fact.key);
    if (fact.kind === 'open') {
      const keys = [pathKey(fact.key), ...(fact.named === undefined ? [] : [nameKey(fact.named)])];
      this.held.set(fact.key, { keys, text });
      this.store.run('write', (m) => {
        for (const key of keys) m.set(key, text, 'PX', STREAM_TTL_MS);
        this.store.publishOn(m, 'streams', text);
      });
      return;
    }
    this.held.delete(fact.key);
    this.store.run('write', (m) => {
      if (held) m.del(...held.keys);
      this.store.publishOn(m, 'streams', text);
    });
  }

  /**
   * Reads which replica holds the session a POST names (by its key, or its session parameter); a
   * find comes as onStream. Never rejects: a reply of the wrong shape is counted and ignored.
   */
  async locate(key: string, named: string | undefined): Promise<void> {
    const keys = [pathKey(key), ...(named === undefined ? [] : [nameKey(named)])];
    const replies = await this.store.readValues(keys, { legacy: redactTarget(key) });
    if (replies === undefined) return;
    const streams = replies.map(heldOrNone);
    if (streams.includes('malformed')) return this.store.malformed.report('read', 'a legacy stream of the wrong shape');
    const found = streams.find((s): s is HeldStream => typeof s === 'object' && s.fact.kind === 'open' && s.holder !== this.store.id);
    if (found) this.onStream(found);
  }

  /** The held streams' keys written again: kept alive while open, and back in a store that lost them. */
  private rewrite(): void {
    if (this.held.size === 0) return;
    this.store.run('refresh', (m) => {
      for (const { keys, text } of this.held.values()) for (const key of keys) m.set(key, text, 'PX', STREAM_TTL_MS);
    });
  }

  close(): void {
    clearInterval(this.refresh);
  }
}

/** One value of an MGET: nothing there (nil), a stream, or malformed. */
const heldOrNone = (reply: unknown): HeldStream | undefined | 'malformed' =>
  reply === null ? undefined : (parseHeldStream(reply as string) ?? 'malformed');

/**
 * In a fleet: this replica takes forwarded POSTs on `at`, the legacy streams it holds are written
 * to the store and published, the others' come in, and a POST naming a session not known here is
 * looked up in the store. Call before the proxy listens.
 */
export async function shareLegacyStreamsThroughRedis(
  proxy: { server: Server; legacy: LegacySessions },
  peers: LegacyPeers,
  state: RedisState,
  at: { host: string; port: number },
  now: () => number,
): Promise<PeerAddress> {
  const address = await peers.listen(proxy, at);
  const streams = new RedisStreams(state, address);
  // A POST waits for the store's answer (bounded by --state-timeout) as well as for a publication.
  peers.holderWaitMs = Math.max(peers.holderWaitMs, state.timeoutMs + 50);
  proxy.legacy.share = (fact) => streams.share(fact);
  streams.onStream = ({ fact, holder, address: theirs }) => {
    // What the store says is checked before it is believed: a holder that is this replica (by its
    // id or its listener: a loop), or a stream no upstream's endpoint event gives (on the MCP
    // endpoint's path, an OAuth path, ...) is refused, counted, and its POSTs are served here.
    const refused =
      holder === state.id || (fact.kind === 'open' && (!peers.setPeer(holder, theirs) || !proxy.legacy.learnPeer(fact, holder, now())));
    if (refused) return state.malformed.report('subscribe', "a legacy stream no replica's upstream could have opened");
    if (fact.kind === 'end') proxy.legacy.learnPeer(fact, holder, now());
    peers.learned();
  };
  peers.locate = (target) => {
    const { key, named } = proxy.legacy.names(target);
    void streams.locate(key, named);
  };
  proxy.server.once('close', () => streams.close());
  return address;
}
