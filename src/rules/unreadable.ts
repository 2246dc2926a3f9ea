// Messages the rules could not read whole: nested deeper than the walk bounds allow, or with more
// error text (or more values in it) than the leak rules read (walk.ts has the bounds and why).
// Past a bound the rules do not guess and do not pass in silence: the message gets one of these
// findings, and the policy decides (config/enforce.yaml blocks both: no working peer sends such a
// message, and what the proxy cannot read it cannot vouch for).
//
// - unreadable-request: a client message (any of a batch, notifications and invalid ones too)
//   nested deeper than the depth bound. Client rules read fixed places (method, _meta, headers),
//   but the proxy forwards the body to a server whose own parser may recurse on it.
// - unreadable-response: the answer to a client request nested deeper than the depth bound, or
//   error text the leak rules stopped reading (more than WALK_BOUNDS.text characters, or more than
//   WALK_BOUNDS.nodes values in error.data or isError content): a leak may sit past where they stopped.
import { formatCount } from '../util/count.ts';
import { errorText } from './leaks.ts';
import { messagesOf, nameOf } from './read.ts';
import type { ExchangeRule, PostRule, Report, Rule } from './types.ts';
import { ALL } from './versions.ts';
import { boundedPointer, nesting, WALK_BOUNDS } from './walk.ts';

const DEPTH = WALK_BOUNDS.depth;
const MIB = WALK_BOUNDS.text / (1024 * 1024);
const SOURCE = 'mcp-warden walk bounds (depth, values, text)';

const REQUEST_FIX = `send JSON nested at most ${DEPTH} levels deep (the Rust and C# SDKs refuse deeper JSON); pass deep structures as a string or a resource`;
const RESPONSE_FIX =
  `answer with JSON nested at most ${DEPTH} levels deep, and keep error text short (what failed, what the caller can do): ` +
  'put large output in a resource link, and details in the server log';

const unreadableRequest: PostRule = {
  id: 'unreadable-request',
  group: 'unreadable',
  severity: 'warning',
  versions: ALL,
  party: 'client',
  subject: 'post',
  summary: `A client message is nested deeper than ${DEPTH} levels: more than the proxy reads, so it is not fully judged`,
  source: SOURCE,
  check(s): Report[] {
    const messages = messagesOf(s.request);
    const batch = s.request.ok && s.request.payload.batch;
    const out: Report[] = [];
    for (let i = 0; i < messages.length && out.length < 3; i++) {
      const m = messages[i]!;
      const { tooDeep } = nesting(m.value);
      if (!tooDeep) continue;
      const at = boundedPointer(['request', ...(batch ? [i] : []), ...tooDeep]);
      out.push({
        message: `the client sent a${m.kind === 'invalid' ? 'n invalid' : ''} ${m.kind === 'invalid' ? 'message' : nameOf(m)} nested more than ${DEPTH} levels deep: the proxy does not read past that, so it was not fully judged`,
        pointer: at,
        evidence: `more than ${DEPTH} levels of objects and arrays`,
        fix: REQUEST_FIX,
      });
    }
    return out;
  },
};

const unreadableResponse: ExchangeRule = {
  id: 'unreadable-response',
  group: 'unreadable',
  severity: 'warning',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary: `An answer is nested deeper than ${DEPTH} levels, or has more error text than the leak rules read (${MIB} MiB, ${formatCount(WALK_BOUNDS.nodes)} values): not fully judged`,
  source: SOURCE,
  check(s): Report[] {
    if (s.request.from !== 'client' || !s.response) return [];
    const { tooDeep } = nesting(s.response.value);
    if (tooDeep) {
      return [
        {
          message: `${s.request.method} was answered with a message nested more than ${DEPTH} levels deep: the proxy does not read past that, so it was not fully judged`,
          pointer: boundedPointer(['response', ...tooDeep]),
          evidence: `more than ${DEPTH} levels of objects and arrays`,
          fix: RESPONSE_FIX,
        },
      ];
    }
    const { cut } = errorText(s.response);
    if (!cut || cut.reason === 'depth') return [];
    const what =
      cut.reason === 'text' ? `more than ${MIB} MiB of error text` : `more than ${formatCount(WALK_BOUNDS.nodes)} values in its error text`;
    return [
      {
        message: `${s.request.method} was answered with ${what}: the leak rules stopped reading there, so the rest was not judged`,
        pointer: cut.pointer,
        evidence: what,
        fix: RESPONSE_FIX,
      },
    ];
  },
};

export const UNREADABLE_RULES: readonly Rule[] = [unreadableRequest, unreadableResponse];
