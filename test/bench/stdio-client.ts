// The benchmark's stdio MCP client: newline-delimited JSON-RPC on a child's stdin and stdout (a
// stdio server, or `mcp-warden stdio` in front of one), each answer matched to its request by id.
// A request not answered within `timeoutMs` fails, as does anything on stdout that is not JSON:
// nothing but JSON-RPC may reach the client's pipe.
import { AwaitedAnswers, type RpcMessage } from './answers.ts';
import type { Child } from './procs.ts';

export type { RpcMessage };

export class StdioClient {
  private readonly answers: AwaitedAnswers;
  private readonly exited: Promise<void>;
  private pending = '';
  private seq = 0;

  constructor(
    readonly child: Child,
    timeoutMs = 10_000,
  ) {
    this.answers = new AwaitedAnswers(timeoutMs, (id) => `pid ${child.pid}: no answer to request ${id} within ${timeoutMs} ms`);
    const { proc } = child;
    proc.stdout!.setEncoding('utf8');
    proc.stdout!.on('data', (chunk: string) => this.read(chunk));
    proc.stdin!.on('error', () => {}); // a child that exited: seen as its exit
    this.exited = new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', (code, signal) => {
        this.answers.fail(new Error(`pid ${child.pid} exited (${signal ?? code})`));
        resolve();
      });
    });
  }

  private read(chunk: string): void {
    this.pending += chunk;
    let start = 0;
    for (let nl = this.pending.indexOf('\n'); nl >= 0; nl = this.pending.indexOf('\n', start)) {
      const line = this.pending.slice(start, nl);
      start = nl + 1;
      if (line.trim() !== '') this.answer(line);
    }
    this.pending = this.pending.slice(start);
  }

  private answer(line: string): void {
    let msg: RpcMessage;
    try {
      msg = JSON.parse(line) as RpcMessage;
    } catch {
      return void this.answers.fail(new Error(`pid ${this.child.pid} wrote a line that is not JSON: ${line.slice(0, 200)}`));
    }
    this.answers.settle(msg);
  }

  /** Sends a request (`paramsJson`: its params, already JSON); resolves with the answer. */
  request(method: string, paramsJson: string): Promise<RpcMessage> {
    const id = ++this.seq;
    const answer = this.answers.wait(id);
    if (!this.answers.failed) this.child.proc.stdin!.write(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsJson}}\n`);
    return answer;
  }

  notify(method: string): void {
    this.child.proc.stdin!.write(`{"jsonrpc":"2.0","method":"${method}"}\n`);
  }

  /** Ends the child's stdin (a stdio server exits when it ends, and mcp-warden with it); stops it by PID if it has not exited within 3 s. */
  async close(): Promise<void> {
    this.answers.stop();
    this.child.proc.stdin!.end();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, 3000)))]);
    clearTimeout(timer);
    await this.child.stop();
  }
}
