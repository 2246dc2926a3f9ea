// Whether the client went away before its response was complete, as the signal undici takes to
// abort the upstream request. undici accepts an EventEmitter with `aborted` (its request options);
// an AbortController cost ~6 µs per request, about what the rest of the request's judging costs.
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';

export class ClientGone extends EventEmitter {
  aborted = false;

  constructor(res: ServerResponse) {
    super();
    res.once('close', () => {
      if (res.writableFinished) return;
      this.aborted = true;
      this.emit('abort');
    });
  }
}
