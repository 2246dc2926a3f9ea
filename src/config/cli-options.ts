// Parsers for command-line values: each returns the value or throws a message that names the flag.
import { availableParallelism } from 'node:os';
import { InvalidArgumentError } from 'commander';

export function parseUrl(value: string): URL {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    return url;
  } catch {
    throw new InvalidArgumentError(`expected an http(s) URL such as http://127.0.0.1:3000/mcp, got "${value}"`);
  }
}

/** "host:port", ":port" or "port"; IPv6 hosts in brackets. */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:(?:\[([^\]]+)\]|([^:\s[\]]*)):)?(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError(`expected host:port such as 127.0.0.1:8787, got "${value}"`);
  }
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

/**
 * `--peer-address`: "host:port" where the other replicas reach this one (port 0: any free one).
 * The host is published for them, so an address that names no one host is refused.
 */
export function parsePeerAddress(value: string): { host: string; port: number } {
  const at = parseListen(value);
  // A bare port would publish parseListen's default host, 127.0.0.1: no other host reaches that.
  const hostGiven = value.includes(':') && !value.startsWith(':');
  if (!hostGiven || ['0.0.0.0', '::'].includes(at.host))
    throw new InvalidArgumentError(
      `expected the host:port the other replicas reach this one at, such as 10.0.3.7:8788 (not 0.0.0.0 or a bare port), got "${value}"`,
    );
  return at;
}

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?$/i;
const UNITS: Record<string, number> = { b: 1, kb: 1e3, kib: 1024, mb: 1e6, mib: 1024 ** 2, gb: 1e9, gib: 1024 ** 3 };

/** A byte size: 1048576, 512kb, 4mib, 1gb. */
export function parseSize(value: string): number {
  const m = SIZE.exec(value.trim());
  if (!m) throw new InvalidArgumentError(`expected a size such as 4mib or 1048576, got "${value}"`);
  return Math.round(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]!);
}

/** A duration: 30000 (ms), 500ms, 30s, 5m. */
export function parseDuration(value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError(`expected a duration such as 30s, 500ms or 60000, got "${value}"`);
  const factor = m[2] === 's' ? 1000 : m[2] === 'm' ? 60_000 : 1;
  return Math.round(Number(m[1]) * factor);
}

/** A comma-separated list: "localhost,proxy.example.com:8443"; empty items dropped. */
export function parseList(value: string): string[] {
  const items = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  if (items.length === 0)
    throw new InvalidArgumentError(`expected a comma-separated list such as localhost,proxy.example.com, got "${value}"`);
  return items;
}

/** A whole number of at least 1. */
export function parseCount(value: string): number {
  const n = Number(value.trim());
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`expected a whole number of at least 1, got "${value}"`);
  return n;
}

/** `--workers`: a count, or `auto` (the cores this process may use). */
export function parseWorkers(value: string): number {
  if (value === 'auto') return availableParallelism();
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new Error(`--workers takes a number from 1 to 256, or auto (got ${JSON.stringify(value)})`);
  return n;
}
