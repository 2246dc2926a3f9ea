// The legacy lifecycle: the version initialize negotiates, ping, and a legacy result that
// borrows the modern era's resultType.
import { versionInfo } from '../mcp/versions.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { answerOf, inBand, isLegacy } from './read.ts';
import type { ExchangeRule, Report } from './types.ts';
import { ALL, LEGACY } from './versions.ts';

export const LIFECYCLE_RULES: readonly ExchangeRule[] = [
  {
    // The exchange's version is what the initialize result says, so an unknown answer makes an
    // unknown version: the rule must judge every version to see it. It only looks at initialize.
    id: 'initialize-version',
    group: 'lifecycle',
    severity: 'warning',
    versions: ALL,
    party: 'server',
    subject: 'exchange',
    summary: 'An initialize result names a protocolVersion that is not a legacy version the spec defines',
    source: 'https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation',
    check(s): Report[] {
      const answer = answerOf(s, 'result', 'initialize');
      if (!answer) return [];
      const version = asRecord(answer.result)?.protocolVersion;
      if (typeof version === 'string' && isLegacy(version)) return [];
      return [
        {
          message:
            typeof version !== 'string'
              ? 'the initialize result has no protocolVersion string'
              : versionInfo(version)
                ? `the initialize result negotiates ${version}, which has no initialize handshake`
                : `the initialize result negotiates ${excerpt(version, 40)}, which is not a protocol version the spec defines`,
          pointer: '/response/result/protocolVersion',
          evidence: excerpt(version ?? answer.result),
          fix: `answer with the client's proposed version if supported, else the latest one you support of ${LEGACY.join(', ')}`,
        },
      ];
    },
  },
  {
    id: 'ping-result',
    group: 'lifecycle',
    severity: 'warning',
    versions: LEGACY,
    party: 'server',
    subject: 'exchange',
    summary: 'A ping was answered with something other than an empty result {}',
    source: 'https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/ping#behavior-requirements',
    check(s): Report[] {
      if (s.request.from !== 'client' || s.request.method !== 'ping' || !s.response) return [];
      const fix = 'answer ping promptly with {"jsonrpc":"2.0","id":<its id>,"result":{}}';
      if (s.response.kind === 'result') {
        const result = asRecord(s.response.result);
        if (result && Object.keys(result).every((k) => k === '_meta')) return [];
        return [
          {
            message: 'ping was answered with a result that is not empty',
            pointer: '/response/result',
            evidence: excerpt(s.response.result),
            fix,
          },
        ];
      }
      // An error on a 4xx/5xx is a transport rejection (session expired, auth); on 2xx the server refused to pong.
      if (s.response.kind === 'error' && inBand(s)) {
        return [
          {
            message: `ping was answered with error ${excerpt(s.response.code, 20)} instead of an empty result`,
            pointer: '/response/error',
            evidence: excerpt(s.response.value),
            fix,
          },
        ];
      }
      return [];
    },
  },
  {
    id: 'result-type-legacy',
    group: 'result-type',
    severity: 'warning',
    versions: LEGACY,
    party: 'server',
    subject: 'exchange',
    summary: 'A legacy-version result says resultType "input_required" (a 2026-07-28 construct)',
    source:
      'https://modelcontextprotocol.io/specification/2026-07-28/basic/index#result-responses, https://modelcontextprotocol.io/specification/2025-11-25/schema#result',
    check(s): Report[] {
      const result = answerOf(s, 'result')?.result;
      if (asRecord(result)?.resultType !== 'input_required') return [];
      return [
        {
          message: `${s.request.method} result says resultType "input_required" in a ${s.version} exchange, which has no multi round-trip requests`,
          pointer: '/response/result/resultType',
          evidence: excerpt(result),
          fix: `answer a ${s.version} request with its final result (ask for input with server-to-client requests such as elicitation/create)`,
        },
      ];
    },
  },
];
