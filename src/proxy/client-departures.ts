// A client that leaves (a TCP reset, or its end of the connection closed) between requests, while
// it sends one, or while its answer is written, is ordinary traffic, not an answer of the proxy:
// logged at debug and counted by when, once per connection (a reset is seen by both the socket's
// error and the request's abort).
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Metrics } from '../sinks/metrics.ts';

export type DepartureWhen = 'idle' | 'request' | 'response';

/** Socket errors that say the client went away, not that it sent something wrong (EOF_STATE: its close mid-request). */
const DEPARTURE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'HPE_INVALID_EOF_STATE']);

export const isDeparture = (err: NodeJS.ErrnoException): boolean => DEPARTURE_CODES.has(err.code ?? '');

/** Where the connection was: between requests, before its answer began, or while the answer was written. */
function departureWhen(socket: Socket): DepartureWhen {
  const res = (socket as Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage;
  if (!res) return 'idle';
  return res.headersSent ? 'response' : 'request';
}

export class ClientDepartures {
  private readonly counted = new WeakSet<Socket>();

  constructor(
    private readonly logger: Logger,
    private readonly metrics: Pick<Metrics, 'clientDisconnected'>,
  ) {}

  /** Watches a new connection for its client closing it first (a close the proxy began is not a departure). */
  watch(socket: Socket): void {
    // Before node's own handler, which ends the proxy's side in turn.
    socket.prependOnceListener('end', () => {
      if (!socket.writableEnded) this.left(socket, 'closed');
    });
  }

  /** The client of `socket` left (`code`: the socket error, or `closed`). */
  left(socket: Socket, code: string): void {
    if (this.counted.has(socket)) return;
    this.counted.add(socket);
    const when = departureWhen(socket);
    this.logger.debug({ when, code, peer: socket.remoteAddress }, 'client disconnected');
    this.metrics.clientDisconnected(when);
  }
}
