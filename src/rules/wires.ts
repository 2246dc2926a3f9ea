// Which transports a rule judges, for the rules that read what only one of them has.
import type { Wire } from './types.ts';

/** Rules about HTTP headers, statuses and POST bodies as Streamable HTTP defines them: the legacy SSE transport and stdio have none of it. */
export const STREAMABLE_HTTP: readonly Wire[] = ['streamable-http'];
/** Rules about newline-delimited messages on a child's stdout. */
export const STDIO: readonly Wire[] = ['stdio'];
/** The transports whose answers come on the session's stream, never on the message's own HTTP response. */
export const STREAM_ANSWERED: readonly Wire[] = ['sse', 'stdio'];
/** Every transport: what a rule without `transports` judges. */
export const ALL_WIRES: readonly Wire[] = ['streamable-http', 'sse', 'stdio'];
