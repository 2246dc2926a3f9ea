// stdio: the client on one pair of streams (mcp-warden's stdin and stdout), the server a child
// process on the other (its stdin and stdout). Newline-delimited JSON-RPC both ways, each line
// through the same engine as HTTP traffic. Nothing but JSON-RPC is ever written to the client's
// stream: the log goes elsewhere, and a line the child wrote that is not a message is the policy's
// to pass or drop. Backpressure both ways (flow-control.ts): the client's output past its buffer
// pauses the child's stdout and the client's input too (the proxy answers some requests itself),
// the child's stdin past its buffer pauses the client's input.
import type { Readable, Writable } from 'node:stream';
import type { Logger } from 'pino';
import { decodeJson } from '../codec/json-body.ts';
import { LineSplitter } from '../codec/line-splitter.ts';
import type { Limits } from '../config/defaults.ts';
import type { Engine } from '../engine/engine.ts';
import { STDIO_HTTP, type LineDelivery } from '../engine/line.ts';
import type { ExchangeState } from '../engine/state.ts';
import type { Judged } from '../engine/plans.ts';
import { ProxyError } from '../errors.ts';
import type { Via } from '../exchange/flow.ts';
import type { ProcessExit } from '../rules/types.ts';
import { recordJudged, type JudgedSinks } from '../sinks/judged.ts';
import { upstreamTrace } from './trace-context.ts';
import { answerText } from './egress.ts';
import { FlowControl } from './flow-control.ts';
import { MessageJoiner, type LineUnit } from './stdio-joiner.ts';

const NEWLINE = Buffer.from('\n');
/** A message is joined from at most this many lines (a pretty-printed tools/list is a few hundred; joining is linear). */
const MAX_JOINED_LINES = 100_000;

export interface StdioRelayOptions {
  engine: Engine;
  sinks: JudgedSinks;
  limits: Limits;
  logger: Logger;
  /** The client's side: what it writes (our stdin) and what it reads (our stdout). */
  client: { input: Readable; output: Writable };
  /** The child's side: its stdin and its stdout. */
  server: { input: Writable; output: Readable };
  /** What names this child's session in the engine (one child, one session). */
  session: string;
}

export class StdioRelay {
  private readonly via: Via;
  private readonly fromClient: LineSplitter;
  private readonly fromServer: LineSplitter;
  private readonly joiner: MessageJoiner;
  private clientGone = false;
  /** A server line over the size limit is being relayed in pieces: the proxy's own lines wait for its end. */
  private serverLineOpen = false;
  private readonly held: Buffer[] = [];
  private heldBytes = 0;
  private readonly flow: FlowControl;

  constructor(private readonly o: StdioRelayOptions) {
    this.via = { wire: 'stdio', session: o.session, sessionId: undefined };
    this.fromClient = new LineSplitter(o.limits.maxRequestBytes, {
      line: (raw) => this.clientLine(raw),
      oversize: (piece, last) => this.unread('client', piece, last),
    });
    this.fromServer = new LineSplitter(o.limits.auditBodyBytes, {
      line: (raw) => this.serverLine(raw),
      oversize: (piece, last) => this.unread('server', piece, last),
    });
    // A message over several lines is read up to the size of a line.
    this.joiner = new MessageJoiner(o.limits.auditBodyBytes, MAX_JOINED_LINES, (unit) => this.serverUnit(unit));
    const { client, server } = o;
    this.flow = new FlowControl([
      { from: client.input, into: [server.input, client.output, this.held] },
      { from: server.output, into: [client.output] },
    ]);
    client.input.on('data', (chunk: Buffer) => corked(server.input, chunk, () => this.fromClient.push(chunk)));
    // The client closed its end: so does the child's stdin (a stdio server exits when it ends).
    client.input.once('end', () => {
      this.fromClient.end();
      server.input.end();
    });
    server.output.on('data', (chunk: Buffer) => corked(client.output, chunk, () => this.fromServer.push(chunk)));
    server.output.once('end', () => {
      this.fromServer.end();
      this.joiner.flush();
    });
    // A child that exited cannot read: what the client still sends is answered when the exit is seen.
    server.input.on('error', (err) => o.logger.debug({ err }, 'server stdin closed'));
    client.output.on('error', (err) => {
      this.clientGone = true;
      o.logger.warn({ err }, 'client closed its stdout; stopping the server');
      server.input.end();
      // No drain will come: what the child still writes is read and dropped, so it can see its stdin end and exit.
      this.flow.go(client.output);
    });
  }

  /**
   * The child exited (`how`: its code or signal): every request still waiting is recorded, and
   * under enforce answered (under audit the client sees the pipe close, as it would directly).
   * Resolves once written.
   */
  serverExited(exit: ProcessExit): Promise<void> {
    this.fromServer.end();
    this.joiner.flush();
    const x = this.o.engine.openBodiless('get', {}, this.via);
    // The client gets the exit's code or signal; the stderr lines go to the findings only.
    const err = new ProxyError('WARDEN_UPSTREAM_EXITED', `MCP server process exited (${exit.how}) before responding`);
    const plan = this.o.engine.serverExited(x, err, { ...STDIO_HTTP, exit }, this.clientGone);
    for (const a of plan.answers) this.toClient(Buffer.from(answerText(a), 'utf8'));
    this.record(x, plan.judged());
    if (this.clientGone || this.o.client.output.writableEnded) return Promise.resolve();
    return new Promise((resolve) => this.o.client.output.write('', () => resolve()));
  }

  private clientLine(raw: Buffer): void {
    const { engine } = this.o;
    const decoded = decodeJson(raw);
    const x = engine.openPost({}, decoded, this.via);
    // With traces exported, the child sees the proxy's span in the line's _meta.traceparent.
    const trace = upstreamTrace(this.o.sinks.tracing, x, decoded, {}, raw);
    const plan = engine.clientBody(x, raw, raw.length + 1, decoded);
    if (plan.deliver.kind === 'forward') this.toServer(trace?.body ?? raw);
    else this.ownToClient(plan.deliver.body);
    this.record(x, plan.judged());
  }

  private serverLine(raw: Buffer): void {
    // Audit writes every line as it comes; enforce holds it until judged (and a join until complete).
    const written = this.o.engine.deliversFirst();
    if (written) this.toClient(raw);
    this.joiner.line(raw, written);
  }

  private serverUnit(unit: LineUnit): void {
    const { engine } = this.o;
    if (unit.unread) {
      if (unit.unread === 'first')
        this.o.logger.warn(
          { from: 'server', transport: 'stdio', limit: this.o.limits.auditBodyBytes },
          'message over the size limit relayed unread',
        );
      if (!unit.written) this.toClient(unit.raw);
      return;
    }
    const x = engine.openBodiless('get', {}, this.via);
    const plan = engine.serverLine(x, { data: unit.data, size: unit.raw.length + 1, raw: unit.raw, lines: unit.lines });
    if (!unit.written) this.deliver(plan.deliver, unit.raw);
    this.record(x, plan.judged());
  }

  private deliver(d: LineDelivery, raw: Buffer): void {
    if (d.kind === 'as-is') this.toClient(raw);
    else if (d.kind === 'replace') this.toClient(Buffer.from(d.text, 'utf8'));
  }

  /** A line over the size limit, relayed in pieces as it comes, unread. */
  private unread(from: 'client' | 'server', piece: Buffer, last: boolean): void {
    if (from === 'client') this.toServer(piece, last);
    else {
      this.toClient(piece, last);
      this.serverLineOpen = !last;
      if (last) this.releaseHeld();
    }
    if (last) this.o.logger.warn({ from, transport: 'stdio' }, 'line over the size limit relayed unread');
  }

  private toServer(bytes: Buffer, end = true): void {
    const { input } = this.o.server;
    if (input.writableEnded || input.destroyed) return;
    this.flow.write(input, end ? Buffer.concat([bytes, NEWLINE]) : bytes);
  }

  private toClient(bytes: Buffer, end = true): void {
    if (this.clientGone) return;
    this.flow.write(this.o.client.output, end ? Buffer.concat([bytes, NEWLINE]) : bytes);
  }

  /**
   * A line of the proxy's own (a block's reply): never inside a server line still being relayed.
   * Held past the client output's buffer size, it pauses the client's input, as a full output would.
   */
  private ownToClient(bytes: Buffer): void {
    if (!this.serverLineOpen) return void this.toClient(bytes);
    this.held.push(bytes);
    this.heldBytes += bytes.length;
    if (this.heldBytes >= this.o.client.output.writableHighWaterMark) this.flow.stop(this.held);
  }

  private releaseHeld(): void {
    for (const line of this.held.splice(0)) this.toClient(line);
    this.heldBytes = 0;
    this.flow.go(this.held);
  }

  private record(x: ExchangeState, judged: readonly Judged[]): void {
    recordJudged(this.o.sinks, x.policy, x.flow.session, judged);
  }
}

/** The lines one read brought leave in one write (a write per line cost a system call each). */
function corked(out: Writable, chunk: Buffer, relay: () => void): void {
  // One line (or part of one), the sequential case: a plain write costs less than a corked one.
  if (chunk.indexOf(10) === chunk.lastIndexOf(10)) {
    relay();
    return;
  }
  out.cork();
  try {
    relay();
  } finally {
    out.uncork();
  }
}
