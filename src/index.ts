// mcp-warden as a library: the proxy, its policies, and the judging on its own (replay a capture
// through a policy, or run the rules over a subject). The CLI (src/cli.ts) is built on these.
export { createProxy, type Proxy, type ProxyOptions, type RunningProxy } from './proxy/server.ts';
export { DEFAULT_LIMITS, type Limits } from './config/defaults.ts';
export { Engine, type EngineOptions } from './engine/engine.ts';
export type { StreamEnd } from './engine/stream.ts';
export type { ExchangeState } from './engine/state.ts';
export type {
  BodyDelivery,
  ClientDelivery,
  ExchangeHttp,
  FailureDelivery,
  Judged,
  JudgedExchange,
  Plan,
  Reply,
  StreamAnswer,
  StreamEndPlan,
  StreamPlan,
} from './engine/plans.ts';
export { decodeJson, type Decoded } from './codec/json-body.ts';
export { ProxyError } from './errors.ts';
export type { HostGuardOptions } from './transport/host-guard.ts';
export { createLogger, type Logger, type LoggerOptions } from './sinks/logger.ts';
export { compilePolicy, defaultPolicy, type PolicyDocument } from './config/compile.ts';
export { formatPolicyError, loadPolicyFile, loadPolicyText, type LoadResult, type PolicyError } from './config/load.ts';
export { PolicyStore } from './config/store.ts';
export { runtimeFactory, type Runtime } from './config/runtime.ts';
export type { Action, Mode, Policy } from './config/types.ts';
export { REWRITABLE } from './rewrite/rewriters.ts';
export { RULES } from './rules/index.ts';
export { RuleEngine } from './rules/engine.ts';
export type { ExchangeSubject, Finding, PostSubject, Rule, RuleInfo, Severity, Subject } from './rules/types.ts';
export { replayCapture, type ReplayOptions, type ReplayReport } from './replay/replay.ts';
