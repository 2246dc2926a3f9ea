// The official SDK client over Streamable HTTP, declaring form elicitation and answering the
// fixture's `ask` / `ask_on_get` tools deterministically with `answerFor(question)`.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, type StreamableHTTPReconnectionOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ClientCapabilities, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';

/** The answer the helper's elicitation handler gives to `question`; `ask` returns it verbatim. */
export function answerFor(question: string): string {
  return `answer to: ${question}`;
}

export interface SdkClientOptions {
  /** Defaults to `{ elicitation: { form: {} } }`. The elicitation handler is installed only if `elicitation` is declared. */
  capabilities?: ClientCapabilities;
  /** Replaces the default elicitation answer. */
  onElicit?: (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>;
  /** Passed to the transport; by default the SDK retries twice, 1 s then 1.5 s (or the server's `retry:`). */
  reconnectionOptions?: StreamableHTTPReconnectionOptions;
  /** Extra request headers (e.g. Authorization) for every request the transport makes. */
  headers?: Record<string, string>;
}

export interface SdkClientHandle {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Every elicitation request the client answered, in order. */
  elicitations: ElicitRequest[];
  /** Closes the client (aborts its streams). Does not send DELETE: call `transport.terminateSession()` for that. */
  close(): Promise<void>;
}

export async function connectSdkClient(url: URL, opts: SdkClientOptions = {}): Promise<SdkClientHandle> {
  const capabilities: ClientCapabilities = opts.capabilities ?? { elicitation: { form: {} } };
  const client = new Client({ name: 'warden-test-client', version: '1.0.0' }, { capabilities });
  const elicitations: ElicitRequest[] = [];
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request);
      if (opts.onElicit) return opts.onElicit(request);
      return { action: 'accept', content: { answer: answerFor(request.params.message) } };
    });
  }
  const transport = new StreamableHTTPClientTransport(url, {
    ...(opts.reconnectionOptions ? { reconnectionOptions: opts.reconnectionOptions } : {}),
    ...(opts.headers ? { requestInit: { headers: opts.headers } } : {}),
  });
  await client.connect(transport);
  return {
    client,
    transport,
    elicitations,
    close: () => client.close(),
  };
}
