// What log records, captures and reports do with payload parts, URLs and request targets: the
// redaction itself (names, shapes, the bounded walker) is in src/redact/.
import { isSecretQueryName } from '../redact/names.ts';
import { REDACTED, redactText } from '../redact/text.ts';
import { hideText, maskSecrets } from '../redact/values.ts';

export { REDACTED, redactText } from '../redact/text.ts';
export { hideText, maskSecrets, maskShapes } from '../redact/values.ts';

/** A request's tool arguments as the policy says they are logged: left out, redacted, or full (as sent minus credentials). */
export function loggedArguments(params: unknown, mode: 'off' | 'redacted' | 'full'): unknown {
  if (mode === 'off' || typeof params !== 'object' || params === null || !('arguments' in params)) return undefined;
  const args = (params as { arguments: unknown }).arguments;
  return mode === 'full' ? maskSecrets(args) : hideText(args);
}

/** `Mcp-Param-*` headers carry tool arguments (2026-07-28), `Mcp-Name` a tool name or a resource URI. */
const PARAM_HEADER = /^mcp-param-/i;
const NAME_HEADER = /^mcp-name$/i;

/**
 * Protocol headers fit for a record: `Mcp-Param-*` values are tool arguments and appear as
 * log.arguments says (hidden unless full, then minus credentials), `Mcp-Name` is masked for
 * credential shapes (a resource URI may carry a token), the rest as it came.
 */
export function loggedHeaders(
  headers: Readonly<Record<string, string | undefined>>,
  mode: 'off' | 'redacted' | 'full' = 'redacted',
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') out[name] = value;
    else if (PARAM_HEADER.test(name)) out[name] = mode === 'full' ? redactText(value) : REDACTED;
    else out[name] = NAME_HEADER.test(name) ? redactText(value) : value;
  }
  return out;
}

function decodeComponent(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** `a=1&b=2` with the values of credential-named parameters, and credential-shaped values, redacted. */
function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return redactText(pair) === pair ? pair : REDACTED;
      const value = pair.slice(eq + 1);
      if (value === '' || value === REDACTED) return pair;
      const secret = isSecretQueryName(decodeComponent(pair.slice(0, eq))) || redactText(decodeComponent(value)) !== decodeComponent(value);
      return secret ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
    })
    .join('&');
}

/**
 * A request target (path, query, fragment) fit for a log line: credential-shaped path segments,
 * and query or fragment values named like credentials or shaped like them, are redacted.
 */
export function redactTarget(target: string): string {
  const hash = target.indexOf('#');
  const beforeHash = hash < 0 ? target : target.slice(0, hash);
  const q = beforeHash.indexOf('?');
  const path = redactText(q < 0 ? beforeHash : beforeHash.slice(0, q));
  const query = q < 0 ? '' : `?${redactQuery(beforeHash.slice(q + 1))}`;
  // A fragment is only ever in a full URL (OAuth's implicit flow puts tokens there).
  const fragment =
    hash < 0 ? '' : `#${target.slice(hash + 1).includes('=') ? redactQuery(target.slice(hash + 1)) : redactText(target.slice(hash + 1))}`;
  return `${path}${query}${fragment}`;
}

/**
 * A URL fit for a log line: the userinfo's password (or a lone username, which is then a token)
 * redacted, and the target as redactTarget leaves it. `http://app:[REDACTED]@db:5432/mcp?key=[REDACTED]`.
 */
export function redactUrl(url: URL | string): string {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return redactText(String(url));
  }
  const user = u.username === '' ? '' : u.password === '' ? REDACTED : redactText(u.username);
  const userinfo = u.password !== '' ? `${user}:${REDACTED}@` : user !== '' ? `${user}@` : '';
  // A URL with no authority (`mailto:`, `data:`) has nothing to strip but its text.
  if (u.host === '' && userinfo === '') return redactText(u.href);
  return `${u.protocol}//${userinfo}${u.host}${redactTarget(`${u.pathname}${u.search}${u.hash}`)}`;
}
