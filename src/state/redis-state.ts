// Session state shared by the replicas of a fleet through Redis (`--state redis://...`). What a
// replica learns of a session (a SessionFact: its version and capabilities, its tool catalogue, a
// list change, the values it made known, its end) it writes to the session's keys and publishes;
// every replica applies what the others publish as it comes, so a session whose requests are
// spread over the replicas is judged as on one. A replica that meets a session it has not heard of
// (it started later, or missed the publication) reads the session's keys first: one round trip,
// never longer than `timeoutMs`.
//
// Keys, each expiring `ttlMs` after its last write or use (a used session's keys are refreshed
// every STATE_BOUNDS.refreshEveryMs): PREFIX + `session:<key>` (a hash: `init`, the initialize or discovery
// fact; `changed`, a tool list change since the last tools/list), `tools:<key>` (the tools/list
// pages of the current catalogue, in order) and `known:<key>` (the values the session made known,
// the newest KNOWN_BOUNDS.values). Publications go to PREFIX + `facts`: the sender's id, a newline,
// the fact as JSON.
//
// What comes back is input: every reply and publication is checked (validate.ts) and bounded
// (--state-max-read: Redis counts a session's keys before it sends them; reply-cap.ts cuts what
// arrives past it); a bad one is counted, said once a minute and ignored (malformed.ts).
//
// Redis down, slow or answering errors: the replica keeps relaying and judging with what it knows,
// logs once per change (error when the store is lost, warn when it is back), counts each failed
// operation (mcp_warden_state_errors_total), and when Redis returns writes and publishes what it
// learned meanwhile (the newest BACKLOG facts). A subscription lost while Redis stays up (the
// connection dropped, a CLIENT KILL) misses what the others publish meanwhile: when it is back,
// every session known here is read again at its next request (onGap), and the loss is logged and
// counted (op subscribe).
//
// Its two connections name themselves in CLIENT LIST: mcp-warden:<replica id> and
// mcp-warden:<replica id>:facts (the subscription).
import { createHash, randomUUID } from 'node:crypto';
import { type ChainableCommander, Redis } from 'ioredis';
import { KNOWN_BOUNDS, STATE_BOUNDS } from '../config/defaults.ts';
import type { SessionFact } from '../exchange/sessions.ts';
import type { Logger } from '../sinks/logger.ts';
import type { SharedSessions } from './shared.ts';
import type { IdClaim } from '../exchange/claims.ts';
import { redactUrl } from '../sinks/redact.ts';
import { MalformedReplies, type StateErrorReason } from './malformed.ts';
import { parseJson, parseSessionFact } from './validate.ts';
import { capReplies } from './reply-cap.ts';

/** Every key and channel of the store's: what else lives in the same Redis is never touched. */
export const PREFIX = 'mcp-warden:';
const CHANNEL = `${PREFIX}facts`;
/** tools/list pages kept per session (a catalogue is bounded by maxToolsPerSession anyway). */
const MAX_PAGES = STATE_BOUNDS.pages;
/** Facts learned while Redis was away, written when it returns (the oldest dropped past this). */
const BACKLOG = STATE_BOUNDS.backlog;

export interface RedisStateOptions {
  url: URL;
  /** A session's keys live this long after their last write or use (limits.sessionIdleMs). */
  ttlMs: number;
  /** The most bytes one read may bring (--state-max-read): a session's keys, or a legacy stream's (default: STATE_BOUNDS.readBytes). */
  maxReadBytes?: number;
  /** A request's claim on its id lives at most this long (limits.requestIdleMs: it is given up then). */
  requestTtlMs: number;
  /** The longest an exchange waits for Redis (a read of a session not known here). */
  timeoutMs: number;
  logger: Logger;
  /**
   * A failed or timed-out operation (connect, write, read, refresh, subscribe: the subscription
   * dropped), or one whose reply was malformed or too large (`reason`; failed when absent).
   */
  onError: (op: string, reason?: StateErrorReason) => void;
  /** The store became usable (true) or went away (false): the state_connected gauge, and readiness under --state-required. */
  onConnection?: (up: boolean) => void;
}

/** Why the store cannot be used, from the error the connection gave: what a person fixes, and how. */
export function storeCause(err: Error & { code?: string }, url: URL): { cause: string; hint?: string } {
  const at = `${url.hostname}:${url.port || '6379'}`;
  if (/\b(NOAUTH|WRONGPASS)\b|invalid (username-)?password|without any password configured/i.test(err.message)) {
    return url.password === ''
      ? { cause: 'the store wants a password', hint: 'give it in the URL: redis://:PASSWORD@host:port (or rediss://)' }
      : { cause: 'the store refused the password (or user) given', hint: 'check the password in the URL: redis://:PASSWORD@host:port' };
  }
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN')
    return { cause: `host ${url.hostname} not found`, hint: 'check the host name of --state (MCP_WARDEN_STATE)' };
  if (err.code === 'ECONNREFUSED') return { cause: `nothing accepts connections at ${at}`, hint: 'is Redis running there, on that port?' };
  if (err.code === 'ETIMEDOUT' || /timed? ?out/i.test(err.message)) return { cause: `no answer from ${at} in time` };
  return { cause: err.message };
}

/** Deletes a claim only if it is still the claimer's (it may have expired and been taken since). */
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

/**
 * A session's keys (KEYS: its hash, its pages, its known values), read only when Redis counts
 * them at most ARGV[1] bytes in all (MEMORY USAGE, no copy): what was planted past the bound
 * never crosses the wire. `{'ok', {init, changed}, pages, known}`, `{'too-large'}`, or
 * `{'malformed'}` for a key of another type.
 */
const RECALL = `
local size = 0
for i = 1, 3 do
  local used = redis.call('memory', 'usage', KEYS[i], 'samples', '0')
  if used then size = size + used end
end
if size > tonumber(ARGV[1]) then return {'too-large'} end
local fields = redis.pcall('hmget', KEYS[1], 'init', 'changed')
local pages = redis.pcall('lrange', KEYS[2], 0, -1)
local known = redis.pcall('lrange', KEYS[3], 0, -1)
if fields.err or pages.err or known.err then return {'malformed'} end
return {'ok', fields, pages, known}`;

/**
 * Values (KEYS) read only when none is longer than ARGV[1] bytes (STRLEN, no copy): `{'ok', values}`,
 * `{'too-large'}`, or `{'malformed'}` for a key of another type.
 */
const BOUNDED_MGET = `
for _, key in ipairs(KEYS) do
  local length = redis.pcall('strlen', key)
  if type(length) == 'table' then return {'malformed'} end
  if length > tonumber(ARGV[1]) then return {'too-large'} end
end
return {'ok', redis.call('mget', unpack(KEYS))}`;

interface Scripts {
  mcpWardenRelease(name: string, value: string): Promise<unknown>;
  mcpWardenRecall(session: string, tools: string, known: string, maxBytes: number): Promise<unknown>;
  mcpWardenBoundedMget(numberOfKeys: number, ...keysThenMaxBytes: Array<string | number>): Promise<unknown>;
}

const keysOf = (key: string) => ({ session: `${PREFIX}session:${key}`, tools: `${PREFIX}tools:${key}`, known: `${PREFIX}known:${key}` });

export class RedisState implements SharedSessions {
  /** This replica, in its publications (its own are not applied twice). */
  readonly id = randomUUID();
  onFact: (fact: SessionFact) => void = () => {};
  onGap: () => void = () => {};
  // Liveness is shared through the keys' expiry (touch): nothing to apply here.
  onUsedElsewhere: (keys: readonly string[]) => void = () => {};
  used: () => readonly string[] = () => [];
  known: ((key: string) => SessionFact[]) | undefined;
  private readonly client: Redis;
  private readonly subscriber: Redis;
  /** Whether the store was reachable when last heard of: undefined before the first connection. */
  private up: boolean | undefined;
  /** While the store is away: said again every minute (STATE_BOUNDS.awaySayEveryMs), with its cause. */
  private awayTimer: NodeJS.Timeout | undefined;
  /** Whether the subscription is up: undefined before it first was. */
  private hearing: boolean | undefined;
  /** Facts learned while Redis was away, as they will be written. */
  private backlog: Array<{ fact: SessionFact; text: string }> = [];
  /** A write was refused by a Redis that is up (said once until a write succeeds). */
  private refusing = false;
  /** A claim was refused by a Redis that is up (said once until a claim succeeds). */
  private refusingClaims = false;
  /** A fact could not be serialised (said once). */
  private unsendable = false;
  private readonly refresh: NodeJS.Timeout;
  private closed = false;
  /** Resolves at the first connection. */
  private readonly connected: Promise<void>;
  private onConnected: () => void = () => {};
  /** Releases of claims that failed, sent again when the store is back (the newest BACKLOG). */
  private unreleased: Array<[string, string]> = [];
  /** The last read came too late (said once until one comes in time). */
  private slow = false;
  /** Claims made, for each claim's own value. */
  private claims = 0;
  /** What the others publish on channels besides the facts' (hear()), by channel. */
  private readonly heard = new Map<string, (text: string) => void>();
  /** What the store sent that this proxy does not write: counted, said once a minute, ignored. */
  readonly malformed: MalformedReplies;
  /** Keys whose read was refused (too large, malformed): not read again (the newest STATE_BOUNDS.unreadable). */
  private readonly unreadable = new Set<string>();

  private get maxReadBytes(): number {
    return this.o.maxReadBytes ?? STATE_BOUNDS.readBytes;
  }

  /** Whether the store is connected and usable now. */
  get available(): boolean {
    return this.up === true;
  }

  /** The longest an exchange waits for the store. */
  get timeoutMs(): number {
    return this.o.timeoutMs;
  }

  constructor(private readonly o: RedisStateOptions) {
    this.malformed = new MalformedReplies(o.logger, (op, reason) => o.onError(op, reason));
    const options = {
      // Fail at once while disconnected: an exchange never waits for a reconnection.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: STATE_BOUNDS.connectTimeoutMs,
      retryStrategy: (times: number) => Math.min(100 * times, STATE_BOUNDS.retryMaxMs),
    };
    this.client = new Redis(o.url.href, { ...options, connectionName: `mcp-warden:${this.id}` });
    this.client.defineCommand('mcpWardenRelease', { numberOfKeys: 1, lua: RELEASE });
    this.client.defineCommand('mcpWardenRecall', { numberOfKeys: 3, lua: RECALL });
    this.client.defineCommand('mcpWardenBoundedMget', { lua: BOUNDED_MGET });
    // Subscribed commands need a connection of their own; it must queue SUBSCRIBE until it connects.
    this.subscriber = new Redis(o.url.href, { ...options, enableOfflineQueue: true, connectionName: `mcp-warden:${this.id}:facts` });
    // A reply past the bound is cut off as it comes (RESP framing and a publication's sender on top of the values read).
    const cut = (op: string) => () =>
      this.malformed.report(op, `a reply past ${this.maxReadBytes} bytes: the connection was cut`, 'too-large');
    capReplies(this.client, this.maxReadBytes + STATE_BOUNDS.replySlackBytes, cut('read'));
    capReplies(this.subscriber, this.maxReadBytes + STATE_BOUNDS.replySlackBytes, cut('subscribe'));
    this.client.on('error', (err: Error) => this.lost(err));
    this.subscriber.on('error', () => {});
    this.subscriber.on('close', () => this.deaf());
    this.subscriber.on('ready', () => this.listening());
    this.connected = new Promise((resolve) => {
      this.onConnected = resolve;
    });
    this.client.on('ready', () => this.found());
    this.subscriber.on('message', (channel: string, text: string) => this.message(channel, text));
    void this.subscriber.subscribe(CHANNEL).catch(() => {});
    this.refresh = setInterval(() => this.touch(this.used()), STATE_BOUNDS.refreshEveryMs);
    this.refresh.unref();
    o.logger.info({ state: redactUrl(o.url), timeoutMs: o.timeoutMs, ttlMs: o.ttlMs }, 'state store');
  }

  /** Writes and publishes a fact this replica learned (from its own traffic). */
  publish(fact: SessionFact): void {
    const text = this.serialized(fact);
    if (text !== undefined) this.send(fact, text);
  }

  /** Writes and publishes a serialised fact, or keeps it for when Redis is back. */
  private send(fact: SessionFact, text: string): void {
    if (this.up !== true) {
      this.skipped('write');
      this.keep(fact, text);
      return;
    }
    this.write(fact, text).then(
      () => {
        this.refusing = false;
      },
      (err: Error) => {
        this.o.onError('write');
        // Lost on the way (the connection went): written when Redis is back. Refused by a Redis that
        // is up (out of memory, read-only): writing it again would be refused again.
        if (this.client.status !== 'ready') return this.keep(fact, text);
        if (!this.refusing)
          this.o.logger.warn({ state: redactUrl(this.o.url), err: err.message }, 'state store refused a write: the others do not learn it');
        this.refusing = true;
      },
    );
  }

  /**
   * The fact as JSON, or undefined when it cannot be (a value nested too deep): then what can be is
   * shared (the version and the session without the capabilities), once logged; never a throw.
   */
  private serialized(fact: SessionFact): string | undefined {
    try {
      return JSON.stringify(fact);
    } catch (err) {
      if (!this.unsendable)
        this.o.logger.warn({ fact: fact.kind, err: (err as Error).message }, 'a session fact could not be shared with the other replicas');
      this.unsendable = true;
      if (fact.kind !== 'initialized' || fact.serverCapabilities === undefined) return undefined;
      return this.serialized({ ...fact, serverCapabilities: undefined, clientCapabilities: undefined });
    }
  }

  /** What another replica learned of session `key`, in the order to apply it; undefined past timeoutMs or on failure. */
  async recall(key: string): Promise<SessionFact[] | undefined> {
    // Refused before: what the others publish still comes; its keys are not read again.
    if (this.unreadable.has(key)) return [];
    const k = keysOf(key);
    const reply = await this.read((r) => (r as Redis & Scripts).mcpWardenRecall(k.session, k.tools, k.known, this.maxReadBytes), {
      session: key,
    });
    if (reply === undefined) return undefined;
    const facts = refusal(reply) ?? factsOf(key, reply) ?? 'malformed';
    if (Array.isArray(facts)) return facts;
    this.refuse(key, 'read', `a session's keys ${facts === 'too-large' ? `past ${this.maxReadBytes} bytes` : 'of the wrong shape'}`, facts);
    return [];
  }

  /** The values of `keys` (nil for a key not there), when none is past --state-max-read; undefined when not read (counted). */
  async readValues(keys: readonly string[], about: Record<string, unknown>): Promise<unknown[] | undefined> {
    const remembered = keys.find((key) => this.unreadable.has(key));
    if (remembered) return undefined;
    const reply = await this.read((r) => (r as Redis & Scripts).mcpWardenBoundedMget(keys.length, ...keys, this.maxReadBytes), about);
    if (reply === undefined) return undefined;
    const refused =
      refusal(reply) ??
      (Array.isArray(reply) && reply.length === 2 && Array.isArray(reply[1]) && reply[1].length === keys.length ? undefined : 'malformed');
    if (refused === undefined) return (reply as [string, unknown[]])[1];
    for (const key of keys)
      this.refuse(key, 'read', refused === 'too-large' ? `a value past ${this.maxReadBytes} bytes` : 'a value of the wrong shape', refused);
    return undefined;
  }

  /** A read of `key` refused (too large or malformed): counted, said, and remembered so it is not read again. */
  private refuse(key: string, op: string, what: string, reason: 'too-large' | 'malformed'): void {
    this.malformed.report(op, what, reason);
    this.unreadable.add(key);
    if (this.unreadable.size > STATE_BOUNDS.unreadable) this.unreadable.delete(this.unreadable.values().next().value!);
  }

  /**
   * A read of the store, within timeoutMs: its reply, or undefined (the store lost, late or
   * failing; counted as op `read`, and said when late with `about`, what was read).
   */
  async read<T>(command: (r: Redis) => Promise<T>, about: Record<string, unknown>, op = 'read'): Promise<T | undefined> {
    // Lost: nothing to wait for. Still connecting for the first time (a replica that just started
    // while traffic flows): worth a wait, within the same bound.
    if (this.up === false) return void this.skipped(op);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.o.timeoutMs);
    });
    try {
      if (this.up === undefined && (await Promise.race([this.connected, late])) === 'late') {
        this.o.onError(op);
        return undefined;
      }
      const read = command(this.client);
      read.catch(() => {});
      const reply = await Promise.race([read, late]);
      if (reply !== 'late') {
        if (this.slow) this.o.logger.info({ state: redactUrl(this.o.url) }, 'state store answering in time again');
        this.slow = false;
        return reply;
      }
      this.o.onError(op);
      // Said once until it answers in time again: a slow store would otherwise log every request.
      if (!this.slow)
        this.o.logger.warn({ ...about, timeoutMs: this.o.timeoutMs }, 'state store slow: judged with what this replica knows');
      this.slow = true;
      return undefined;
    } catch {
      this.o.onError(op);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Commands built on `m`, sent without waiting: none while the store is away (what they write is
   * written again by the caller's own refresh; a publication is not sent again); a failure is
   * counted under `op`.
   */
  run(op: 'write' | 'refresh', build: (m: ChainableCommander) => void): void {
    if (this.up !== true) return void this.skipped(op);
    const m = this.client.multi();
    build(m);
    m.exec().then(
      (replies) => {
        if (failureOf(replies) !== undefined) this.o.onError(op);
      },
      () => this.o.onError(op),
    );
  }

  /** Publishes `text` on PREFIX + `channel`, after this replica's id (its own are not heard back), within `m`. */
  publishOn(m: ChainableCommander, channel: string, text: string): void {
    m.publish(`${PREFIX}${channel}`, `${this.id}\n${text}`);
  }

  /** What the other replicas publish on PREFIX + `channel` (publishOn) goes to `handle`. */
  hear(channel: string, handle: (text: string) => void): void {
    this.heard.set(`${PREFIX}${channel}`, handle);
    void this.subscriber.subscribe(`${PREFIX}${channel}`).catch(() => {});
  }

  /**
   * Claims client requests' ids while they are open (SET NX, expiring with the request, one round
   * trip, within timeoutMs): each claim says whether another process's open request holds the id,
   * or gives this one a release that deletes the claim if it is still this request's. Nothing in
   * time (the store away, slow or failing): no claims, and the ids are judged by what this replica
   * sees; claims that succeed after the bound are released at once.
   */
  async claim(keys: readonly string[]): Promise<IdClaim[]> {
    if (this.up !== true) {
      if (keys.length > 0) this.skipped('claim');
      return [];
    }
    // A digest: the key holds a client's session id and request id, of any length.
    const names = keys.map((key) => `${PREFIX}inflight:${createHash('sha256').update(key).digest('base64url')}`);
    const values = keys.map(() => `${this.id}:${++this.claims}`);
    let gaveUp = false;
    // One request (most POSTs) is one command; a batch's go in one pipeline.
    const sent: Promise<Array<[Error | null, unknown]> | null> =
      names.length === 1
        ? this.client.set(names[0]!, values[0]!, 'PX', this.o.requestTtlMs, 'NX').then(
            (reply) => [[null, reply]],
            (err: Error) => [[err, null]],
          )
        : names.reduce((p, name, i) => p.set(name, values[i]!, 'PX', this.o.requestTtlMs, 'NX'), this.client.pipeline()).exec();
    // Claims made after the wait was given up hold nobody's request: released as they come.
    sent.then(
      (replies) => {
        if (!gaveUp || !isReplies(replies, names.length)) return;
        for (let i = 0; i < replies.length; i++) if (replies[i]![1] === 'OK') this.release(names[i]!, values[i]!);
      },
      () => {},
    );
    const replies = await this.read(() => sent, { requestIds: keys.length }, 'claim');
    if (!replies) {
      gaveUp = true;
      return [];
    }
    if (!isReplies(replies, names.length)) {
      // What was claimed is not known: nothing is released, the claims expire with their requests.
      this.malformed.report('claim', 'a reply of the wrong shape');
      return [];
    }
    const refused = replies.find(([err]) => err !== null)?.[0];
    // Refused by a Redis that is up (out of memory, read-only): said once until a claim succeeds.
    if (refused && !this.refusingClaims && this.client.status === 'ready')
      this.o.logger.warn(
        { state: redactUrl(this.o.url), err: refused.message },
        "state store refused a claim: the request's id is judged by what this replica sees",
      );
    this.refusingClaims = refused !== undefined;
    return replies.map(([err, reply], i) => {
      // SET NX answers OK (claimed) or nil (held by another): anything else says nothing of the id.
      if (err || (reply !== 'OK' && reply !== null)) {
        if (err) this.o.onError('claim');
        else this.malformed.report('claim', 'a reply of the wrong type');
        return { taken: false, release: undefined };
      }
      return reply === 'OK' ? { taken: false, release: () => this.release(names[i]!, values[i]!) } : { taken: true, release: undefined };
    });
  }

  /** Gives up a claim; settles once the store has it, failed, or timeoutMs passed (what an answer may wait for). */
  private release(name: string, value: string): Promise<void> {
    // By the script's digest (EVALSHA), loaded once per connection by ioredis. One that fails (the
    // store away) is sent again when it is back: else the id would stay claimed until it expires.
    const sent = (this.client as Redis & Scripts).mcpWardenRelease(name, value).then(
      () => {},
      () => {
        this.o.onError('claim');
        this.unreleased.push([name, value]);
        if (this.unreleased.length > BACKLOG) this.unreleased.shift();
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.o.timeoutMs);
    });
    return Promise.race([sent, late]).finally(() => clearTimeout(timer));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.refresh);
    clearInterval(this.awayTimer);
    // QUIT on a connection that is up (what was sent is answered first); any other is dropped, not
    // left reconnecting (a QUIT queued on one that is down would wait for Redis to come back).
    const end = async (r: Redis): Promise<void> => {
      if (r.status !== 'ready') return r.disconnect();
      await r.quit().catch(() => r.disconnect());
    };
    await Promise.all([end(this.client), end(this.subscriber)]);
  }

  private async write(fact: SessionFact, text: string): Promise<void> {
    const m = this.client.multi();
    this.stage(m, fact, text);
    // The sender first: a replica skips its own publications (a catalogue may be large) unparsed.
    this.publishOn(m, 'facts', text);
    const failed = failureOf(await m.exec());
    if (failed) throw failed;
  }

  /** The commands that write `fact` to its session's keys, within `m`. */
  private stage(m: ChainableCommander, fact: SessionFact, text: string): void {
    const k = keysOf(fact.key);
    const ttl = this.o.ttlMs;
    switch (fact.kind) {
      case 'initialized':
      case 'discovered':
        m.hset(k.session, 'init', text).pexpire(k.session, ttl);
        break;
      case 'tools':
        if (fact.firstPage) m.del(k.tools).hdel(k.session, 'changed');
        m.rpush(k.tools, text).ltrim(k.tools, -MAX_PAGES, -1).pexpire(k.tools, ttl).pexpire(k.session, ttl);
        break;
      case 'tools-changed':
        m.hset(k.session, 'changed', '1').pexpire(k.session, ttl);
        break;
      case 'known':
        m.rpush(k.known, ...fact.values)
          .ltrim(k.known, -KNOWN_BOUNDS.values, -1)
          .pexpire(k.known, ttl);
        break;
      case 'ended':
        m.del(k.session, k.tools, k.known);
        break;
    }
  }

  /**
   * A publication: the sender's id, a newline, the text; this replica's own are skipped unread.
   * Whatever it holds, nothing thrown here reaches the client library's handler (the process).
   */
  private message(channel: string, text: string): void {
    try {
      const newline = typeof text === 'string' ? text.indexOf('\n') : -1;
      if (newline < 0) {
        this.malformed.report('subscribe', 'a publication without a sender');
        return;
      }
      if (text.slice(0, newline) === this.id) return;
      const body = text.slice(newline + 1);
      if (channel === CHANNEL) this.received(body);
      else this.heard.get(channel)?.(body);
    } catch {
      this.malformed.report('subscribe', 'a publication that could not be applied');
    }
  }

  private received(text: string): void {
    const fact = parseSessionFact(parseJson(text));
    if (fact) this.onFact(fact);
    else this.malformed.report('subscribe', 'a session fact of the wrong shape');
  }

  /**
   * Keeps a used session's keys alive as long as one replica uses it; a session whose hash is gone
   * (evicted, or lost with a Redis restart or FLUSHALL) is written again from what this replica
   * knows (heal), so a replica that reads it later judges it as before.
   */
  private touch(keys: readonly string[]): void {
    if (keys.length === 0) return;
    if (this.up !== true) return void this.skipped('refresh');
    const m = this.client.multi();
    for (const key of keys) for (const name of Object.values(keysOf(key))) m.pexpire(name, this.o.ttlMs);
    m.exec().then(
      (replies) => {
        if (!isReplies(replies, 3 * keys.length)) return this.o.onError('refresh');
        keys.forEach((key, i) => {
          if (replies[3 * i]![1] === 0) this.heal(key);
        });
      },
      () => this.o.onError('refresh'),
    );
  }

  /** Writes a session's facts again (not published: the others know them), from what this replica knows. */
  private heal(key: string): void {
    const facts = this.known?.(key) ?? [];
    if (facts.length === 0) return;
    const k = keysOf(key);
    this.run('refresh', (m) => {
      m.del(k.known);
      for (const fact of facts) {
        const text = this.serialized(fact);
        if (text !== undefined) this.stage(m, fact, text);
      }
    });
  }

  private keep(fact: SessionFact, text: string): void {
    this.backlog.push({ fact, text });
    if (this.backlog.length > BACKLOG) this.backlog.shift();
  }

  private lost(err: Error): void {
    if (this.closed) return;
    if (this.up !== false) {
      this.o.onError('connect');
      const why = storeCause(err, this.o.url);
      this.o.logger.error(
        { state: redactUrl(this.o.url), err: err.message, ...why },
        'state store unavailable: each replica judges with what it knows until it is back',
      );
      this.away(why);
    }
    this.up = false;
  }

  /** An operation not even tried: the store is away. */
  private skipped(op: string): void {
    this.o.onError(op, 'unavailable');
  }

  /** The store went away: the gauge says so, and the log again every minute while it lasts (an outage is not one line). */
  private away(why: { cause: string; hint?: string }): void {
    this.o.onConnection?.(false);
    const since = Date.now();
    clearInterval(this.awayTimer);
    this.awayTimer = setInterval(() => {
      this.o.logger.warn(
        { state: redactUrl(this.o.url), ...why, awaySeconds: Math.round((Date.now() - since) / 1000) },
        'state store still unavailable: each replica judges with what it knows',
      );
    }, STATE_BOUNDS.awaySayEveryMs);
    this.awayTimer.unref();
  }

  /** The subscription dropped: what the others publish is missed until it is back. */
  private deaf(): void {
    if (this.closed || this.hearing !== true) return;
    this.hearing = false;
    this.o.onError('subscribe');
    // With the whole store gone, lost() has said so already.
    if (this.client.status === 'ready')
      this.o.logger.warn(
        { state: redactUrl(this.o.url) },
        'state store subscription lost: what the other replicas learn is missed until it is back',
      );
  }

  /** The subscription is (back) up; after a gap, what was missed is read again from the keys. */
  private listening(): void {
    const gap = this.hearing === false;
    this.hearing = true;
    if (!gap) return;
    this.onGap();
    this.o.logger.warn(
      { state: redactUrl(this.o.url) },
      'state store subscription back: sessions known here are read again at their next request',
    );
  }

  /**
   * Connected. ioredis carries on in database 0 when the SELECT of the URL's database fails (a
   * Redis with fewer databases): that store is none, said once, and not connected to again.
   */
  private found(): void {
    const db = Number(this.o.url.pathname.slice(1) || '0');
    if (db === 0) {
      this.usable();
      return;
    }
    this.client.select(db).then(
      () => this.usable(),
      (err: Error) => {
        if (this.closed) return;
        this.o.onError('connect');
        const why = { cause: `this Redis has no database ${db}`, hint: 'name one it has (0-15 by default)' };
        this.o.logger.error(
          { state: redactUrl(this.o.url), err: err.message, ...why },
          'state store unavailable: each replica judges with what it knows',
        );
        this.away(why);
        this.up = false;
        this.client.disconnect();
        this.subscriber.disconnect();
      },
    );
  }

  /** The store can be used: what was learned meanwhile goes out. */
  private usable(): void {
    if (this.up === false)
      this.o.logger.warn({ state: redactUrl(this.o.url), backlog: this.backlog.length }, 'state store available again');
    else this.o.logger.info({ state: redactUrl(this.o.url) }, 'state store connected');
    this.up = true;
    clearInterval(this.awayTimer);
    this.awayTimer = undefined;
    this.o.onConnection?.(true);
    this.onConnected();
    // What was learned meanwhile, in the order it was learned.
    const backlog = this.backlog;
    this.backlog = [];
    for (const { fact, text } of backlog) this.send(fact, text);
    const unreleased = this.unreleased;
    this.unreleased = [];
    for (const [name, value] of unreleased) this.release(name, value);
  }
}

/** Whether `replies` are a MULTI's or pipeline's replies, `count` of them, each [error, reply]. */
function isReplies(replies: unknown, count: number): replies is Array<[Error | null, unknown]> {
  return (
    Array.isArray(replies) &&
    replies.length === count &&
    replies.every((r) => Array.isArray(r) && r.length === 2 && (r[0] === null || r[0] instanceof Error))
  );
}

/** The first error among a MULTI's replies; a reply that is not one (the store speaking another shape) is one too. */
function failureOf(replies: unknown): Error | undefined {
  if (replies === null) return new Error('the transaction was aborted');
  if (!Array.isArray(replies) || !isReplies(replies, replies.length)) return new Error('a reply of the wrong shape');
  return replies.find(([err]) => err !== null)?.[0] ?? undefined;
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** The refusal a script answered with (`{'too-large'}`, `{'malformed'}`), if it did. */
function refusal(reply: unknown): 'too-large' | 'malformed' | undefined {
  if (!Array.isArray(reply) || reply.length !== 1) return undefined;
  return reply[0] === 'too-large' ? 'too-large' : 'malformed';
}

/**
 * A session's facts from its keys as RECALL reads them (`{'ok', {init, changed}, pages, known}`),
 * or undefined when they are not what this proxy writes (a fact of the wrong shape, another type).
 */
function factsOf(key: string, reply: unknown): SessionFact[] | undefined {
  if (!Array.isArray(reply) || reply.length !== 4 || reply[0] !== 'ok') return undefined;
  const [, fields, pages, known] = reply as [string, unknown, unknown, unknown];
  if (!Array.isArray(fields) || fields.length !== 2 || !isStrings(pages) || !isStrings(known)) return undefined;
  const [init, changed] = fields as [unknown, unknown];
  const facts: SessionFact[] = [];
  for (const text of [init, ...pages]) {
    if (text === null) continue;
    const fact = parseSessionFact(parseJson(text), key);
    if (!fact || !(text === init ? fact.kind === 'initialized' || fact.kind === 'discovered' : fact.kind === 'tools')) return undefined;
    facts.push(fact);
  }
  if (changed === '1') facts.push({ kind: 'tools-changed', key });
  if (known.length > 0) {
    const fact = parseSessionFact({ kind: 'known', key, values: known }, key);
    if (!fact) return undefined;
    facts.push(fact);
  }
  return facts;
}
