// `--state` (MCP_WARDEN_STATE): where the sessions' state lives. `memory` (the default): in this
// process (with --workers, shared through the primary). `redis://[:PASSWORD@]HOST:PORT[/DB]` or
// `rediss://...` (TLS): in Redis, shared by every replica that names the same store.
import { InvalidArgumentError } from 'commander';

export type StateLocation = { kind: 'memory' } | { kind: 'redis'; url: URL };

export function parseState(value: string): StateLocation {
  if (value.trim() === 'memory') return { kind: 'memory' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`expected memory, or redis://HOST:PORT[/DB] (rediss:// for TLS), got "${redactedState(value)}"`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new InvalidArgumentError(`expected memory, or redis://HOST:PORT[/DB] (rediss:// for TLS), got "${redactedState(value)}"`);
  }
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d{1,2}$/.test(db))
    throw new InvalidArgumentError(`the database of ${redactedState(value)} must be a number, got "${db}"`);
  return { kind: 'redis', url };
}

/** The location as logs may show it: a password (and a user name) replaced. */
export function redactedState(value: string | URL): string {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    // Not a URL: whatever sits before an @ may be a credential.
    return String(value).replace(/\/\/[^/@]*@/, '//***@');
  }
  if (url.password !== '') url.password = '***';
  if (url.username !== '') url.username = '***';
  return url.href;
}
