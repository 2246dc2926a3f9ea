// Redaction of payload parts that go to logs and captures.
import { REDACTED } from './logger.ts';

/** Tool arguments keep their shape and types, never their text: a string may be any secret. */
export function redactArguments(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return REDACTED;
  if (depth > 32 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => redactArguments(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactArguments(v, depth + 1)]));
}

/** Field names whose values are credentials, whatever object they sit in. */
const SECRET_FIELD = /^(authorization|proxy[-_]?authorization|cookie|set[-_]?cookie|(access|refresh|id)?[-_]?token|password|passwd|secret|client[-_]?secret|api[-_]?key|x[-_]api[-_]key)$/i;

/** Arguments as sent, except the values of fields named like credentials. */
export function redactSecretFields(value: unknown, depth = 0): unknown {
  if (depth > 32 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => redactSecretFields(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELD.test(k) ? REDACTED : redactSecretFields(v, depth + 1)]));
}

/** A request's tool arguments as the policy says they are logged: left out, redacted, or as sent (credential fields still redacted). */
export function loggedArguments(params: unknown, mode: 'off' | 'redacted' | 'full'): unknown {
  if (mode === 'off' || typeof params !== 'object' || params === null || !('arguments' in params)) return undefined;
  const args = (params as { arguments: unknown }).arguments;
  return mode === 'full' ? redactSecretFields(args) : redactArguments(args);
}
