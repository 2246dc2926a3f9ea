// Hand-built ExchangeSubjects and findings for unit tests of rules and rewriters: a client
// request (tools/call by default) under a version, what answered it, and the session it ran in.
import { NO_VERDICT } from '../../src/verdicts.ts';
import { classify, type JsonRpcId, type Message } from '../../src/codec/jsonrpc.ts';
import { emptySession, type Session, type Tool } from '../../src/exchange/sessions.ts';
import type { OpenRequest } from '../../src/exchange/table.ts';
import type { BodyProblem, ExchangeSubject, Finding } from '../../src/rules/types.ts';

export const MODERN = '2026-07-28';
export const LEGACY_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;
export const ALL_VERSIONS = [...LEGACY_VERSIONS, MODERN] as const;

/** The `_meta` every 2026-07-28 request carries (R18). */
export const modernMeta = (version = MODERN): Record<string, unknown> => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientCapabilities': {},
});

export interface SubjectOptions {
  version?: string | undefined;
  method?: string;
  id?: JsonRpcId;
  /** Request params; a 2026-07-28 request gets the required `_meta` unless `noMeta`. */
  params?: Record<string, unknown>;
  noMeta?: boolean;
  /** tools/call: the tool's name (default "echo"). */
  tool?: string;
  from?: 'client' | 'server';
  /** The response as a JSON value (classified), or a Message. */
  response?: unknown;
  unmatched?: unknown[];
  status?: number | undefined;
  transport?: ExchangeSubject['transport'];
  contentType?: string | undefined;
  proxyError?: string;
  bodyProblem?: BodyProblem['problem'];
  outcome?: string;
  session?: Partial<Session>;
  /** Tools of a complete catalogue (sets toolsComplete). */
  catalogue?: string[];
}

export function session(over: Partial<Session> = {}): Session {
  return { ...emptySession('anon:test', undefined), ...over };
}

const isMessage = (v: unknown): v is Message =>
  typeof v === 'object' && v !== null && 'kind' in v && 'value' in v && typeof (v as { kind: unknown }).kind === 'string';

const asMessage = (v: unknown): Message => (isMessage(v) ? v : classify(v));

export function subject(o: SubjectOptions = {}): ExchangeSubject {
  const version = 'version' in o ? o.version : MODERN;
  const method = o.method ?? 'tools/call';
  const tool = method === 'tools/call' ? (o.tool ?? 'echo') : undefined;
  let params: Record<string, unknown> = o.params ?? (tool !== undefined ? { name: tool, arguments: {} } : {});
  if (version === MODERN && !o.noMeta && !('_meta' in params)) params = { ...params, _meta: modernMeta() };
  // Built as a variable (not a literal checked for excess properties): OpenRequest is growing.
  const fields = {
    scope: 'test:1',
    from: o.from ?? 'client',
    id: o.id ?? 7,
    method,
    tool,
    params,
    sessionId: undefined,
    protocolVersion: version,
    startedAt: 0,
    requestBytes: 64,
    headers: {},
    verdict: NO_VERDICT,
  };
  const request: OpenRequest = fields;
  const tools = new Map<string, Tool>((o.catalogue ?? []).map((name) => [name, { name, inputSchema: { type: 'object' } }]));
  const response = o.response === undefined ? undefined : asMessage(o.response);
  return {
    kind: 'exchange',
    version,
    request,
    requestHeaders: {},
    response,
    outcome: o.outcome ?? (response ? response.kind : 'no-response'),
    status: 'status' in o ? o.status : 200,
    contentType: 'contentType' in o ? o.contentType : 'application/json',
    transport: o.transport ?? 'json',
    proxyError: o.proxyError,
    bodyProblem: o.bodyProblem ? { problem: o.bodyProblem, excerpt: '…' } : undefined,
    unmatched: (o.unmatched ?? []).map(asMessage),
    session: session({ ...(o.catalogue ? { tools, toolsComplete: true, toolsFromFirstPage: true } : {}), ...o.session }),
  };
}

/** A finding of `rule` (the rewriters read only its rule id; the rest is filler). */
export function finding(rule: string, over: Partial<Finding> = {}): Finding {
  return { rule, severity: 'error', message: `${rule} (test)`, pointer: '/response', evidence: '', fix: '', versions: [], ...over };
}

/** JSON-RPC messages as plain values. */
export const resultMsg = (result: unknown, id: JsonRpcId | null = 7): Record<string, unknown> => ({ jsonrpc: '2.0', id, result });
export const errorMsg = (code: unknown, message: unknown, data?: unknown, id: JsonRpcId | null = 7): Record<string, unknown> => ({
  jsonrpc: '2.0',
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});
/** A tools/call result with one text block (and resultType "complete" under 2026-07-28 unless told otherwise). */
export const toolResult = (
  text: string,
  extra: Record<string, unknown> = {},
  version: string | undefined = MODERN,
): Record<string, unknown> => ({
  content: [{ type: 'text', text }],
  ...(version === MODERN ? { resultType: 'complete' } : {}),
  ...extra,
});
