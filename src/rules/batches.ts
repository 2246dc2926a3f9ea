// JSON-RPC batches: only 2025-03-26 allows them (never with initialize), and only an array may
// answer an array.
import { versionInfo } from '../mcp/versions.ts';
import { excerpt } from '../redact/excerpt.ts';
import { pointer } from '../codec/json-pointer.ts';
import { nameOf } from './read.ts';
import type { PostRule, Report } from './types.ts';
import { ALL } from './versions.ts';

export const BATCH_RULES: readonly PostRule[] = [
  {
    id: 'batch-not-allowed',
    group: 'batch',
    severity: 'error',
    versions: ALL,
    party: 'client',
    subject: 'post',
    summary:
      'A client POSTed a JSON-RPC batch under a version without batching (2024-11-05: warning), or initialize inside a 2025-03-26 batch',
    source:
      'https://modelcontextprotocol.io/specification/2025-03-26/basic/index#batching, https://modelcontextprotocol.io/specification/2025-03-26/basic/lifecycle#initialization, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages',
    check(s): Report[] {
      const info = versionInfo(s.version);
      if (!info || !s.request.ok || !s.request.payload.batch) return [];
      const { messages } = s.request.payload;
      const evidence = excerpt(messages.map(nameOf));
      if (info.batching) {
        const i = messages.findIndex((m) => m.kind === 'request' && m.method === 'initialize');
        if (i < 0) return [];
        return [
          {
            message: 'initialize was sent inside a JSON-RPC batch',
            pointer: pointer('request', i, 'method'),
            evidence,
            fix: 'send initialize alone in its own POST; batch only later messages',
          },
        ];
      }
      return [
        {
          // 2024-11-05 never mentions batches (JSON-RPC 2.0 has them): a warning there.
          ...(info.streamableHttp ? {} : { severity: 'warning' as const }),
          message: `the client POSTed a JSON-RPC batch of ${messages.length} message(s); ${s.version} ${info.streamableHttp ? 'removed batching' : 'does not define batches'}`,
          pointer: '/request',
          evidence,
          fix: 'send each JSON-RPC message in its own POST',
        },
      ];
    },
  },
  {
    // A separate rule from batch-not-allowed: the server breaks it. An array may only answer an
    // array (JSON-RPC 2.0), which only 2025-03-26 allows; an array answering a client's array
    // under another version is the client's fault, reported by batch-not-allowed alone.
    id: 'batch-response-not-allowed',
    group: 'batch',
    severity: 'error',
    versions: ALL,
    party: 'server',
    subject: 'post',
    summary: 'A server answered a POST that was not a batch with a JSON array',
    source:
      'https://www.jsonrpc.org/specification#batch, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages',
    check(s): Report[] {
      if (!s.response?.ok || !s.response.payload.batch) return [];
      if (s.request.ok && s.request.payload.batch) return [];
      return [
        {
          message: `the server answered a single JSON-RPC message with a JSON array of ${s.response.payload.messages.length}`,
          pointer: '/response',
          evidence: excerpt(s.response.payload.messages.map((m) => m.value)),
          fix: 'answer a single request with a single JSON-RPC response object, not an array',
        },
      ];
    },
  },
];
