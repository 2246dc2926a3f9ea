// `--state` (MCP_WARDEN_STATE): where the sessions' state lives. `memory` (the default): in this
// process (with --workers, shared through the primary). `redis://[:PASSWORD@]HOST:PORT[/DB]` or
// `rediss://...` (TLS): in Redis, shared by every replica that names the same store.
import { InvalidArgumentError } from 'commander';

export type StateLocation = { kind: 'memory' } | { kind: 'redis'; url: URL };

export function parseState(value: string): StateLocation {
  if (value.trim() === 'memory') return { kind: 'memory' };
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // not a URL: refused below
  }
  if (url === undefined || (url.protocol !== 'redis:' && url.protocol !== 'rediss:'))
    throw new InvalidArgumentError(`expected memory, or redis://HOST:PORT[/DB] (rediss:// for TLS), got "${hideUserinfo(value)}"`);
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d{1,2}$/.test(db))
    throw new InvalidArgumentError(`the database of ${hideUserinfo(value)} must be a number, got "${db}"`);
  return { kind: 'redis', url };
}

/**
 * `text` with the password of every URL in it hidden: what the command line may print of a value
 * it refused (the logs redact more, with src/redact, which --version and --help do not load).
 */
export const hideUserinfo = (text: string): string => text.replace(/(\b[a-z][\w+.-]*:\/\/[^\s/@:'"]*:)[^\s/@'"]+@/gi, '$1[REDACTED]@');
