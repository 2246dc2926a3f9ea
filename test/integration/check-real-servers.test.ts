// `mcp-warden check` against the official SDK server (JSON and SSE answers) and
// @modelcontextprotocol/server-everything: every finding is one the README's "check" section
// explains, and nothing else fires. Both speak 2025-11-25 only (SDK 1.32).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CHECK_DEFAULTS } from '../../src/check/defaults.ts';
import { runCheck } from '../../src/check/run.ts';
import { startEverythingServer } from '../fixtures/everything-server.ts';
import { startSdkServer } from '../fixtures/sdk-server.ts';

/** The probes that do not pass, with the rules behind each: the same for all three (README, "check"). */
const EXPLAINED = {
  discover: ['skip', []], // a legacy-only server: its 400 for a modern request is the fallback signal, not a fault
  'unknown-tool': ['fail', ['unknown-tool-as-iserror']], // the SDK's isError "MCP error -32602: Tool ... not found"
  'bad-version-header': ['warn', ['legacy-range-code']], // the SDK's 400 carries -32000
  'wrong-accept': ['warn', ['legacy-range-code']], // the SDK's 406 carries -32000
  'foreign-origin': ['fail', ['probe/foreign-origin']], // DNS-rebinding protection is off by default in the SDK transport
};

const servers = [
  { name: 'SDK server (json)', start: () => startSdkServer({ mode: 'json' }) },
  { name: 'SDK server (sse)', start: () => startSdkServer({ mode: 'sse', eventStore: true }) },
  { name: 'server-everything', start: startEverythingServer },
];

describe('check against real servers', () => {
  for (const server of servers) {
    test(server.name, async () => {
      const upstream = await server.start();
      try {
        const r = await runCheck({
          url: upstream.url,
          headers: {},
          safeTools: [],
          toolCalls: true,
          ...CHECK_DEFAULTS,
          probeTimeoutMs: 5000,
          clientVersion: '0.0.0-test',
        });
        const seen = Object.fromEntries(
          r.probes.filter((p) => p.verdict !== 'pass').map((p) => [p.probe, [p.verdict, p.findings.map((f) => f.rule)]]),
        );
        assert.deepEqual(
          seen,
          EXPLAINED,
          JSON.stringify(
            r.probes.filter((p) => p.verdict !== 'pass'),
            null,
            1,
          ),
        );
        assert.deepEqual([r.protocol.spoken, r.protocol.used, r.exitCode], [['2025-11-25'], '2025-11-25', 1]);
        // Argument errors are isError results naming the parameter; a missing resource is -32602.
        for (const p of ['tool-argument-type', 'tool-argument-missing', 'unknown-resource'])
          assert.equal(r.probes.find((x) => x.probe === p)?.verdict, 'pass', p);
      } finally {
        await upstream.close();
      }
    });
  }
});
