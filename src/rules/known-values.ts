// What a session made known: the paths, hosts and addresses the client sent (tool arguments, the
// roots it answered to roots/list) and the ones the server returned in a successful result (a
// directory listing, a tool that names its allowed directories). A failure that names one of them
// reveals nothing the session did not already hold, so the leak rules and their rewriter take them
// as they take the request's own words (leaks.ts sentStrings). A filesystem server's "path outside
// allowed directories: X not in ROOT" names the root the client configured and the server listed.
//
// Only leak-shaped tokens are kept, never whole strings: credentials are masked before anything is
// taken, and a stack trace is never taken (a trace in a success is still no licence for one in an
// error). The scan is bounded (KNOWN_BOUNDS): every answer pays it, so it reads the first part only.
import { KNOWN_BOUNDS } from '../config/defaults.ts';
import { bare, findLeaks, isPathLike, LEAK_PATTERNS } from './leak-patterns.ts';
import { redactCredentials } from './leaks.ts';
import { walkStrings } from './walk.ts';

/** The patterns whose matches a session can make known: paths, addresses, hosts (not stack traces). */
const KNOWABLE = LEAK_PATTERNS.filter((p) => p.rule !== 'leaked-stack-trace');

/** Path-like tokens: an absolute path or a `file:` URI, up to whitespace, a quote or a bracket. */
const PATH_TOKEN =
  /(?<![^\s"'\x60([{<=,;|>*])(?:file:\/\/[^\s"'\x60<>]*|\/[^\s"'\x60<>()[\]{}|,;*?]+|[A-Za-z]:[\\/][^\s"'\x60<>()[\]{}|,;*?]*)/g;

/** The path a `file:` URI names (`file:///home/u/p%20q` is /home/u/p q); undefined when it names none. */
function fileUriPath(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    const path = decodeURIComponent(url.pathname);
    // file:///C:/x names C:/x.
    return /^\/[A-Za-z]:\//.test(path) ? path.slice(1) : path;
  } catch {
    return undefined;
  }
}

/**
 * How every knowable token begins: a path or `file:` URI after a token's start, `://`, `jdbc:`,
 * the first octets of a private IPv4 or IPv6 address, an internal name's suffix, an ADO string's `Server=`. A string with none names nothing to learn and is not
 * scanned: most arguments and answers, on every exchange (the scans cost ~30 µs an exchange, more
 * than judging it). A superset of KNOWABLE and PATH_TOKEN; a miss would only forgo an exemption.
 */
const MAY_HOLD =
  /(?:^|[\s"'\x60([{<=,;|>*])(?:file:\/\/|\/|[A-Za-z]:[\\/])|:\/\/|jdbc:|\b(?:10|172|100|192\.168|169\.254)\.\d|\bf[c-e][0-9a-f]{2}:|\.(?:internal|localdomain|local|corp|lan|intranet|home\.arpa)\b|\b(?:Server|Data Source|Host)=/i;

/** The leak-shaped tokens of every string of `value` (first KNOWN_BOUNDS.scanChars characters), bare, credentials masked. */
export function knownValues(value: unknown): string[] {
  const found = new Set<string>();
  const add = (token: string | undefined): void => {
    const b = token === undefined ? '' : bare(token);
    if (b.length > 0 && b.length <= KNOWN_BOUNDS.chars && found.size < KNOWN_BOUNDS.values) found.add(b);
  };
  walkStrings(value, { nodes: 10_000, text: KNOWN_BOUNDS.scanChars }, (text) => {
    if (!MAY_HOLD.test(text)) return undefined;
    const masked = redactCredentials(text);
    for (const m of masked.matchAll(PATH_TOKEN)) {
      const token = m[0];
      if (token.startsWith('file://')) add(fileUriPath(token));
      else if (isPathLike(bare(token))) add(token);
    }
    for (const leak of findLeaks(masked, { patterns: KNOWABLE })) add(leak.match);
    return undefined;
  });
  return [...found];
}
