// The protocol family: JSON-RPC framing, parse errors, batches, notification POSTs, the response
// content type, the lifecycle (initialize, ping, capabilities a server request needs), session ids and, in protocol-modern.ts, the
// modern era's per-request rules. Each rule judges one exchange or one POST, alone.
// What the family does not judge yet, and why: README.md, "What the rules do not judge yet".
import { BATCH_RULES } from './batches.ts';
import { FRAMING_RULES } from './framing.ts';
import { LIFECYCLE_RULES } from './lifecycle.ts';
import { MODERN_PROTOCOL_RULES } from './protocol-modern.ts';
import { propagatedClientError, serverRequestWithoutCapability } from './server-requests.ts';
import { HTTP_RULES } from './streamable-http.ts';
import type { Rule } from './types.ts';

export const PROTOCOL_RULES: readonly Rule[] = [
  ...FRAMING_RULES,
  ...BATCH_RULES,
  ...HTTP_RULES,
  ...LIFECYCLE_RULES,
  serverRequestWithoutCapability,
  propagatedClientError,
  ...MODERN_PROTOCOL_RULES,
];
