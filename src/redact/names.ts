// Names (JSON keys, query parameters, `name=value` in text) whose values are credentials. A name is
// split into words (`auth_token`, `X-Amz-Signature`, `clientSecret`) and judged by its last word,
// so `max_tokens`, `tokenizer`, `author`, `sortKey` and `publicKey` keep their values.

/** A name without one of these is never a credential's: one cheap test before any splitting. */
const CANDIDATE = /pass|pwd|secret|token|jwt|sig|cred|cookie|auth|key|pin|otp/i;

/** Last words that name a credential. */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  'password',
  'passwd',
  'passphrase',
  'passcode',
  'pass',
  'pwd',
  'secret',
  'secrets',
  'token',
  'jwt',
  'signature',
  'sig',
  'credential',
  'credentials',
  'cookie',
  'authorization',
  'auth',
  'pin',
  'otp',
  'totp',
]);

/** Endings of a run-together last word that name a credential: PGPASSWORD, apikey, setcookie, authtoken. */
const SECRET_ENDING =
  /(?:password|passwd|passphrase|secret|token|apikey|privatekey|secretkey|accesskey|signature|credentials?|cookie|authorization|jwt|pwd)$/;

/** `key` names a credential after one of these: api_key, X-Api-Key, privateKey, AWS_SECRET_ACCESS_KEY. */
const KEY_QUALIFIERS: ReadonlySet<string> = new Set([
  'api',
  'access',
  'secret',
  'private',
  'signing',
  'encryption',
  'master',
  'client',
  'auth',
  'session',
  'app',
  'license',
  'subscription',
]);

/** Tokens that are protocol bookkeeping, not credentials (MCP's progressToken, pagination tokens). */
const NOT_SECRET: ReadonlySet<string> = new Set([
  'progresstoken',
  'pagetoken',
  'nextpagetoken',
  'nexttoken',
  'continuationtoken',
  'synctoken',
  'cancellationtoken',
]);

/** Words of a name: split at punctuation and at a lower-to-upper change (`accessToken`). */
const WORD_BREAK = /[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])/;

/** Whether the value under `name` is a credential, whatever object, query or text it sits in. */
export function isSecretName(name: string): boolean {
  if (name.length > 80 || !CANDIDATE.test(name)) return false;
  const words = name.split(WORD_BREAK).filter((w) => w !== '');
  const last = words[words.length - 1]?.toLowerCase();
  if (last === undefined) return false;
  if (last === 'key') return KEY_QUALIFIERS.has(words[words.length - 2]?.toLowerCase() ?? '');
  // The last two words run together too: pass_phrase, pass_word.
  const lastTwo = `${words[words.length - 2]?.toLowerCase() ?? ''}${last}`;
  if (!SECRET_WORDS.has(last) && !SECRET_ENDING.test(last) && !SECRET_WORDS.has(lastTwo) && !SECRET_ENDING.test(lastTwo)) return false;
  return !NOT_SECRET.has(words.join('').toLowerCase());
}

/** Names whose numbers are credentials too (a PIN, a numeric password); under any other, a number is a count (`pass: 14`). */
const NUMERIC_SECRET = /(?:pin|otp|passcode|password|passwd|pwd)$/i;

/** Whether a number under `name` is a credential. */
export const isSecretNumberName = (name: string): boolean => NUMERIC_SECRET.test(name) && isSecretName(name);

/**
 * Query names that are credentials only in a URL: Google's `?key=`, OAuth's authorization `?code=`,
 * and a legacy SSE session's id (`?sessionId=`), which lets whoever holds it post into the session.
 */
const QUERY_ONLY: ReadonlySet<string> = new Set(['key', 'code', 'sig', 'sk', 'sessionid', 'session_id']);

/** Whether a query parameter's value is a credential. */
export const isSecretQueryName = (name: string): boolean => QUERY_ONLY.has(name.toLowerCase()) || isSecretName(name);
