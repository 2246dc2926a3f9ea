// Closing a connection whose request body was refused unread, without losing the refusal.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { LINGER_BOUNDS } from '../config/defaults.ts';

/**
 * Marks `req`'s connection to close after its answer, gracefully: the answer and a FIN go out, the
 * rest of the body is read and dropped within LINGER_BOUNDS, then the socket is destroyed. Node
 * ends a `connection: close` answer with socket.destroySoon(), which destroys the socket once the
 * FIN is written; the client's unread bytes then draw a reset (RST), and a client still writing
 * its body gets EPIPE and may never read the 413 (2 of 5 uploads, 19 of 20 chunked ones, seen).
 */
export function lingerAfterAnswer(req: IncomingMessage, bounds = LINGER_BOUNDS): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  let dropped = 0;
  let idle: NodeJS.Timeout | undefined;
  let total: NodeJS.Timeout | undefined;
  const close = (): void => void socket.destroy();
  const onData = (chunk: Buffer): void => {
    dropped += chunk.length;
    if (dropped > bounds.bytes) close();
    else idle?.refresh();
  };
  socket.destroySoon = () => {
    socket.end();
    idle = setTimeout(close, bounds.idleMs);
    total = setTimeout(close, bounds.totalMs);
  };
  socket.once('close', () => {
    clearTimeout(idle);
    clearTimeout(total);
  });
  // What the client still sends is read (so the socket is never closed on unread bytes) and dropped.
  req.on('data', onData);
  req.resume();
}
