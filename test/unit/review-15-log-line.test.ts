// Review of #15 (infoRecord): isPlain() checks mixin, formatters.log, hooks.streamWrite, nestedKey,
// messageKey and multistream metadata, but not pino's own per-key work: `redact` (stringifiers),
// `serializers`, `msgPrefix`, `hooks.logMethod`. createProxy takes any pino Logger (ProxyOptions.logger,
// exported from src/index.ts): with one of those, the exchange line differs from pino's; with
// `redact`, what the operator redacted reaches the log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino, type LoggerOptions } from 'pino';
import { infoRecord } from '../../src/sinks/logger.ts';

function lines(options: LoggerOptions) {
  const out: string[] = [];
  const destination = new Writable({
    write: (c, _e, cb) => {
      out.push(String(c));
      cb();
    },
  });
  return { logger: pino({ timestamp: false, ...options }, destination), out };
}

const record = {
  method: 'tools/call',
  tool: 'login',
  arguments: { user: 'bob', apiKey: 'REDACTED' },
  peer: '10.1.2.3',
  userAgent: 'agent/1',
};

for (const [name, options] of [
  ['redact (an operator hides the client address)', { redact: ['peer', 'userAgent'] }],
  ['serializers', { serializers: { tool: (t: string) => t.toUpperCase() } }],
  ['msgPrefix', { msgPrefix: '[warden] ' }],
  [
    'hooks.logMethod',
    {
      hooks: {
        logMethod(args: unknown[], method: (...a: unknown[]) => void) {
          method.apply(this, [{ ...(args[0] as object), extra: 1 }, ...args.slice(1)]);
        },
      },
    },
  ],
] as const) {
  test(`infoRecord writes the line pino writes, under ${name}`, () => {
    const viaPino = lines(options as LoggerOptions);
    const direct = lines(options as LoggerOptions);
    viaPino.logger.info(record, 'exchange');
    infoRecord(direct.logger, record, 'exchange');
    assert.equal(direct.out[0], viaPino.out[0]);
  });
}
