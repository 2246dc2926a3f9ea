// The ordered list of stages every frame (a request body, a JSON response body, one SSE event's
// data) runs through. The order is data, here and nowhere else; the README draws it.
//
//   client -> decode -> correlate -> rules -> upstream -> server
//   server -> decode -> correlate -> rules -> client
//
// Stages are synchronous and do no I/O: the transport hands a frame in and acts on what comes
// back (completed exchanges with their findings to log; later, edits).
import { decodeJson, decodeJsonText, type Decoded } from './codec/json-body.ts';
import type { Message } from './codec/jsonrpc.ts';
import type { Completed, Correlator, Flow } from './exchange/correlate.ts';
import type { Sender } from './exchange/table.ts';
import type { RuleEngine } from './rules/engine.ts';
import { exchangeSubject, type ResponseHttp } from './rules/subjects.ts';

export interface Frame {
  from: Sender;
  /** The message(s): a body's bytes, or one SSE event's data. */
  body: Uint8Array | string;
  /** Bytes on the wire (the body, or the whole SSE event block). */
  size: number;
  flow: Flow;
  /** The HTTP response this frame travels in (for a client frame: not known yet). */
  http: ResponseHttp;
  /** Mcp-Session-Id issued on this response, if any. */
  issuedSessionId: string | undefined;
  decoded?: Decoded;
  /** Exchanges this frame completed. */
  completed: Completed[];
  /** Responses in this frame that answered no open request. */
  unmatched: Message[];
}

export interface StageContext {
  correlator: Correlator;
  engine: RuleEngine;
  now: number;
}

export interface Stage {
  name: string;
  run(frame: Frame, ctx: StageContext): void;
}

const decode: Stage = {
  name: 'codec.decode',
  run(frame) {
    // The transport may have decoded already (it needs a client body's messages to find the flow).
    frame.decoded ??= typeof frame.body === 'string' ? decodeJsonText(frame.body) : decodeJson(frame.body);
  },
};

const correlate: Stage = {
  name: 'exchange.correlate',
  run(frame, { correlator, now }) {
    if (!frame.decoded?.ok) return;
    const { messages } = frame.decoded.payload;
    const share = Math.round(frame.size / messages.length);
    for (const msg of messages) {
      if (msg.kind === 'request') correlator.request(msg, frame.from, frame.flow, share, now);
      else if (msg.kind === 'notification') correlator.notification(msg, frame.from, frame.flow);
      else {
        const done = correlator.response(msg, frame.from, frame.flow, share, now, frame.issuedSessionId);
        if (done) frame.completed.push(done);
        else frame.unmatched.push(msg);
      }
    }
  },
};

const rules: Stage = {
  name: 'rules.evaluate',
  run(frame, { engine }) {
    for (const c of frame.completed) c.findings = engine.evaluate(exchangeSubject(c, frame.flow, frame.http));
  },
};

export const PIPELINE: readonly Stage[] = [decode, correlate, rules];

export function runPipeline(frame: Frame, ctx: StageContext): Frame {
  for (const stage of PIPELINE) stage.run(frame, ctx);
  return frame;
}
