// The ordered list of stages every frame (a request body, a JSON response body, one SSE event's
// data) runs through. The order is data, here and nowhere else; the README draws it.
//
//   client -> decode -> correlate -> upstream -> server
//   server -> decode -> correlate -> client
//
// Stages are synchronous and do no I/O: the transport hands a frame in and acts on what comes
// back (completed exchanges to log; later, findings and edits).
import { decodeJson, decodeJsonText, type Decoded } from './codec/json-body.ts';
import type { Message } from './codec/jsonrpc.ts';
import type { Completed, Correlator, Flow } from './exchange/correlate.ts';
import type { Sender } from './exchange/table.ts';

export interface Frame {
  from: Sender;
  /** The message(s): a body's bytes, or one SSE event's data. */
  body: Uint8Array | string;
  /** Bytes on the wire (the body, or the whole SSE event block). */
  size: number;
  flow: Flow;
  /** Mcp-Session-Id issued on this response, if any. */
  issuedSessionId: string | undefined;
  decoded?: Decoded;
  /** Exchanges this frame completed. */
  completed: Completed[];
}

export interface StageContext {
  correlator: Correlator;
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
      else if (msg.kind !== 'notification') {
        const done = correlator.response(msg, frame.from, frame.flow, share, now, frame.issuedSessionId);
        if (done) frame.completed.push(done);
      }
    }
  },
};

export const PIPELINE: readonly Stage[] = [decode, correlate];

export function runPipeline(frame: Frame, ctx: StageContext): Frame {
  for (const stage of PIPELINE) stage.run(frame, ctx);
  return frame;
}

/** The messages a decoded frame holds (none when it did not decode). */
export const messagesOf = (frame: Frame): readonly Message[] => (frame.decoded?.ok ? frame.decoded.payload.messages : []);
