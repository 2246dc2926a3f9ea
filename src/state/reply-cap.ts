// What ioredis may buffer of one reply. Its parser holds a reply until the last byte comes, with no
// bound of its own: a store (or whatever answers at its address) that sends a reply of gigabytes,
// or trickles one that never ends, would grow the process past any memory limit. The bytes that
// arrive while the same command waits for its reply (or, on a subscription, between two
// publications) are counted; past the bound the connection is cut, the command fails, and ioredis
// connects again.
import type { Redis } from 'ioredis';

/** Cuts `redis`'s connection when more than `maxBytes` arrive without a reply or publication completing; `onCut` hears of it first. */
export function capReplies(redis: Redis, maxBytes: number, onCut: () => void): void {
  let publications = 0;
  redis.on('message', () => publications++);
  redis.on('connect', () => {
    const stream = redis.stream;
    let waiting: unknown;
    let heard = publications;
    let bytes = 0;
    // After ioredis's own listener (prepended): the chunk is parsed, completed replies shifted out.
    stream.on('data', (chunk: Buffer) => {
      const front = redis.commandQueue.peekFront();
      if (front !== waiting || heard !== publications) {
        waiting = front;
        heard = publications;
        bytes = 0;
      }
      bytes += chunk.length;
      if (bytes <= maxBytes) return;
      bytes = 0;
      onCut();
      stream.destroy();
    });
  });
}
