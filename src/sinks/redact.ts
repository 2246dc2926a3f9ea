// Redaction of payload parts that go to logs and captures.
import { REDACTED } from './logger.ts';

/** Tool arguments keep their shape and types, never their text: a string may be any secret. */
export function redactArguments(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return REDACTED;
  if (depth > 32 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => redactArguments(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactArguments(v, depth + 1)]));
}

/** A request's tool arguments as the policy says they are logged: left out, redacted, or as sent. */
export function loggedArguments(params: unknown, mode: 'off' | 'redacted' | 'full'): unknown {
  if (mode === 'off' || typeof params !== 'object' || params === null || !('arguments' in params)) return undefined;
  const args = (params as { arguments: unknown }).arguments;
  return mode === 'full' ? args : redactArguments(args);
}
