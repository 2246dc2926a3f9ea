// The modern era's per-request rules (2026-07-28): the `_meta` and the headers every request
// carries, `resultType` and Multi Round-Trip Requests, caching hints, removed methods, and what a
// stateless HTTP exchange must not carry (sessions, client responses, cancellation notifications).
// What is left out, and why: README.md, "What the rules do not judge yet".
import { MODERN_POST_RULES } from './modern-posts.ts';
import { MODERN_REQUEST_RULES } from './modern-requests.ts';
import { MODERN_RESULT_RULES } from './modern-results.ts';
import type { ExchangeRule, PostRule } from './types.ts';

export const MODERN_PROTOCOL_RULES: readonly (ExchangeRule | PostRule)[] = [
  ...MODERN_REQUEST_RULES,
  ...MODERN_RESULT_RULES,
  ...MODERN_POST_RULES,
];
