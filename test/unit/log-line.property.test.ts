// infoRecord (src/sinks/logger.ts) writes an exchange record as pino writes it, without pino's walk
// over its keys: the same line on generated records (fast-check), and pino itself wherever the
// logger adds something of its own. PROPERTY_RUNS_MULTIPLIER and PROPERTY_SEED as in the other files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { pino } from 'pino';
import { createLogger, infoRecord, type Logger } from '../../src/sinks/logger.ts';
import { runs } from '../helpers/arbitraries.ts';

/** A destination that keeps each line written to it. */
function sink(): { destination: Writable; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    decodeStrings: false,
    write: (chunk, _e, cb) => {
      lines.push(String(chunk));
      cb();
    },
  });
  return { destination, lines };
}

/** A logger as the proxy builds it (`fields`: a worker's), and the lines it wrote. */
function captured(fields?: Record<string, unknown>): { logger: Logger; lines: string[] } {
  const { destination, lines } = sink();
  return { logger: createLogger({ destination: destination as never, level: 'info', fields }), lines };
}

const sameTime = (line: string): string => line.replace(/"time":"[^"]*"/, '"time":"T"');

/** Text without lone surrogates (pino writes those raw, JSON.stringify escapes them: see the last test). */
const text = fc.string({ unit: 'binary', maxLength: 40 });
const value = fc.oneof(text, fc.integer(), fc.double(), fc.constant(undefined), fc.constant(null), fc.boolean());
/** The exchange record's shape (sinks/exchange-log.ts), any values. */
const record = fc.record({
  method: text,
  id: fc.oneof(text, fc.integer(), fc.constant(null)),
  tool: fc.option(text, { nil: undefined }),
  arguments: fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }),
  from: fc.constantFrom('client', 'server'),
  traceId: fc.option(fc.stringMatching(/^[0-9a-f]{32}$/), { nil: undefined }),
  peer: value,
  userAgent: value,
  clientName: value,
  clientVersion: value,
  session: fc.oneof(text, fc.constant(null)),
  protocolVersion: fc.oneof(text, fc.constant(null)),
  status: fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }),
  transport: fc.constantFrom('json', 'sse', 'get-sse', 'stdio', 'none'),
  outcome: text,
  proxyError: fc.option(text, { nil: undefined }),
  expired: fc.option(fc.constantFrom('idle', 'capacity'), { nil: undefined }),
  violations: fc.nat(),
  verdict: fc.option(fc.constantFrom('rewrite', 'block'), { nil: undefined }),
  durationMs: fc.double(),
  requestBytes: fc.nat(),
  responseBytes: fc.nat(),
});

test('an exchange record is the line pino writes, byte for byte (time aside)', () => {
  fc.assert(
    fc.property(record, fc.boolean(), (r, worker) => {
      const fields = worker ? { worker: 2, pid: 1234 } : undefined;
      const viaPino = captured(fields);
      const direct = captured(fields);
      viaPino.logger.info(r, 'exchange');
      infoRecord(direct.logger, r, 'exchange');
      assert.equal(direct.lines.length, 1);
      assert.equal(sameTime(direct.lines[0]!), sameTime(viaPino.lines[0]!));
    }),
    runs(3_000),
  );
});

test('below info, nothing is written', () => {
  const { destination, lines } = sink();
  infoRecord(createLogger({ destination: destination as never, level: 'warn' }), { method: 'ping' }, 'exchange');
  assert.deepEqual(lines, []);
});

test('a logger with a mixin of its own logs the record itself (the mixin is kept)', () => {
  const { destination, lines } = sink();
  const logger = pino({ mixin: () => ({ region: 'eu' }) }, destination as never);
  infoRecord(logger, { method: 'ping' }, 'exchange');
  assert.equal(JSON.parse(lines[0]!).region, 'eu');
  assert.equal(JSON.parse(lines[0]!).method, 'ping');
});

test('a lone surrogate: pino writes it raw, infoRecord escapes it; the value read back is the one logged', () => {
  const direct = captured();
  infoRecord(direct.logger, { tool: 'a\ud800b' }, 'exchange');
  assert.equal(JSON.parse(direct.lines[0]!).tool, 'a\ud800b');
});
