// The benchmark's legacy HTTP+SSE client (2024-11-05): one GET stream per session, the message
// endpoint from its first (`endpoint`) event, each request POSTed there (202 Accepted) and its
// answer read on the stream, matched by id. A call is done when both have come. undici, with an
// Agent of its own (keep-alive, as many connections as requests in flight) closed with the session.
import { Agent, request } from 'undici';
import { AwaitedAnswers, type RpcMessage } from './answers.ts';

export class LegacyClient {
  private readonly agent = new Agent({ keepAliveTimeout: 60_000 });
  private readonly answers: AwaitedAnswers;
  private endpoint: URL | undefined;
  private onEndpoint: (() => void) | undefined;
  private pending = '';
  private seq = 0;

  private constructor(
    private readonly sse: URL,
    private readonly timeoutMs: number,
  ) {
    this.answers = new AwaitedAnswers(timeoutMs, (id) => `${sse.href}: no answer to request ${id} on the stream within ${timeoutMs} ms`);
  }

  /** Opens the GET stream at `sse` and waits for its endpoint event. */
  static async open(sse: URL, timeoutMs = 10_000): Promise<LegacyClient> {
    const client = new LegacyClient(sse, timeoutMs);
    try {
      const res = await request(sse, {
        dispatcher: client.agent,
        method: 'GET',
        headers: { accept: 'text/event-stream' },
        headersTimeout: timeoutMs,
        bodyTimeout: 0, // the stream idles between calls
      });
      if (res.statusCode !== 200) throw new Error(`GET ${sse.href}: HTTP ${res.statusCode}`);
      const body = res.body;
      body.setEncoding('utf8');
      body.on('data', (chunk: string) => client.read(chunk));
      body.on('error', (err: Error) => client.answers.fail(err));
      body.on('end', () => client.answers.fail(new Error(`${sse.href}: the stream ended`)));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${sse.href}: no endpoint event within ${timeoutMs} ms`)), timeoutMs);
        client.onEndpoint = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      return client;
    } catch (err) {
      await client.close();
      throw err;
    }
  }

  /** Where the POSTs go, as the endpoint event named it. */
  get messageUrl(): URL {
    if (!this.endpoint) throw new Error('no endpoint yet');
    return this.endpoint;
  }

  private read(chunk: string): void {
    this.pending += chunk;
    let start = 0;
    for (let end = this.pending.indexOf('\n\n'); end >= 0; end = this.pending.indexOf('\n\n', start)) {
      this.event(this.pending.slice(start, end));
      start = end + 2;
    }
    this.pending = this.pending.slice(start);
  }

  private event(block: string): void {
    let type = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      else if (line.startsWith('event:')) type = line.slice(6).trim();
    }
    if (data.length === 0) return;
    if (type === 'endpoint') {
      this.endpoint = new URL(data.join('\n'), this.sse);
      this.onEndpoint?.();
      return;
    }
    let msg: RpcMessage;
    try {
      msg = JSON.parse(data.join('\n')) as RpcMessage;
    } catch {
      return void this.answers.fail(new Error(`${this.sse.href}: an event that is not JSON: ${block.slice(0, 200)}`));
    }
    this.answers.settle(msg);
  }

  private async post(body: string): Promise<void> {
    const res = await request(this.messageUrl, {
      dispatcher: this.agent,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    await res.body.dump();
    if (res.statusCode !== 202) throw new Error(`POST ${this.messageUrl.href}: HTTP ${res.statusCode}, expected 202`);
  }

  /** POSTs a request (`paramsJson`: its params, already JSON); resolves with its answer from the stream once the POST was accepted too. */
  async request(method: string, paramsJson: string): Promise<RpcMessage> {
    const id = ++this.seq;
    const answer = this.answers.wait(id);
    try {
      const [, msg] = await Promise.all([this.post(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsJson}}`), answer]);
      return msg;
    } catch (err) {
      this.answers.forget(id);
      throw err;
    }
  }

  async notify(method: string): Promise<void> {
    await this.post(`{"jsonrpc":"2.0","method":"${method}"}`);
  }

  /** Closes the stream and every connection of the session. */
  async close(): Promise<void> {
    this.answers.stop();
    this.answers.fail(new Error(`${this.sse.href}: closed`));
    await this.agent.destroy();
  }
}
