// A fleet's claims on request ids (`--state redis://`): a client request of a session claims its
// id in the shared store before the POST that carries it is judged, so a replica knows when
// another replica has a request of the same session under the same id still awaiting its answer
// (the rule request-id-in-flight), as one proxy knows from its own table. The claim is released
// when the request leaves the table (answered, given up or evicted).
import { idTokenOf, type Message } from '../codec/jsonrpc.ts';
import { requestKey, sessionScope } from './table.ts';

/** What the store said of one request's id: another process holds it, or this one now does (`release` gives it up, settling once the store has it or gave up waiting). */
export interface IdClaim {
  taken: boolean;
  release: (() => Promise<void>) | undefined;
}

/** Claims the ids `keys` name, one claim per key in order; none (an empty list) when the store cannot say in time. */
export type ClaimIds = (keys: readonly string[]) => Promise<readonly IdClaim[]>;

export class ClaimBook {
  /** Each claimed request message's claim, until its draft takes it. */
  private readonly byMessage = new WeakMap<Message, IdClaim>();

  constructor(private readonly claimIds: ClaimIds) {}

  /** Claims the ids of the requests among `messages`, sent in the session `sessionId` names. */
  async claim(sessionId: string, messages: readonly Message[]): Promise<void> {
    const requests = messages.filter((m): m is Extract<Message, { kind: 'request' }> => m.kind === 'request');
    if (requests.length === 0) return;
    const scope = sessionScope(sessionId);
    const claims = await this.claimIds(requests.map((m) => requestKey(scope, 'client', m.id, idTokenOf(m))));
    for (let i = 0; i < claims.length; i++) this.byMessage.set(requests[i]!, claims[i]!);
  }

  /** The claim made for `msg`, once (its draft takes it). */
  take(msg: Message): IdClaim | undefined {
    const claim = this.byMessage.get(msg);
    if (claim) this.byMessage.delete(msg);
    return claim;
  }
}
