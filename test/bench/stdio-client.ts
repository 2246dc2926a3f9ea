// The benchmark's stdio MCP client: newline-delimited JSON-RPC on a child's stdin and stdout (a
// stdio server, or `mcp-warden stdio` in front of one), each answer matched to its request by id.
// A request not answered within `timeoutMs` fails, as does anything on stdout that is not JSON:
// nothing but JSON-RPC may reach the client's pipe.
import { performance } from 'node:perf_hooks';
import type { Child } from './procs.ts';

export interface RpcMessage {
  id?: unknown;
  method?: string;
  result?: unknown;
  error?: unknown;
}

interface Waiting {
  at: number;
  resolve(m: RpcMessage): void;
  reject(e: Error): void;
}

export class StdioClient {
  private readonly waiting = new Map<number, Waiting>();
  private readonly watchdog: NodeJS.Timeout;
  private readonly exited: Promise<void>;
  private pending = '';
  private seq = 0;
  private failed: Error | undefined;

  constructor(
    readonly child: Child,
    private readonly timeoutMs = 10_000,
  ) {
    const { proc } = child;
    proc.stdout!.setEncoding('utf8');
    proc.stdout!.on('data', (chunk: string) => this.read(chunk));
    proc.stdin!.on('error', () => {}); // a child that exited: seen as its exit
    this.exited = new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', (code, signal) => {
        this.fail(new Error(`pid ${child.pid} exited (${signal ?? code})`));
        resolve();
      });
    });
    this.watchdog = setInterval(() => {
      const now = performance.now();
      for (const [id, w] of this.waiting)
        if (now - w.at > this.timeoutMs) {
          this.waiting.delete(id);
          w.reject(new Error(`pid ${child.pid}: no answer to request ${id} within ${this.timeoutMs} ms`));
        }
    }, 500);
    this.watchdog.unref();
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
      return void this.fail(new Error(`pid ${this.child.pid} wrote a line that is not JSON: ${line.slice(0, 200)}`));
    }
    if (typeof msg.id !== 'number' || msg.method !== undefined) return;
    const w = this.waiting.get(msg.id);
    if (!w) return;
    this.waiting.delete(msg.id);
    w.resolve(msg);
  }

  private fail(err: Error): void {
    this.failed ??= err;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }

  /** Sends a request (`paramsJson`: its params, already JSON); resolves with the answer. */
  request(method: string, paramsJson: string): Promise<RpcMessage> {
    if (this.failed) return Promise.reject(this.failed);
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { at: performance.now(), resolve, reject });
      this.child.proc.stdin!.write(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsJson}}\n`);
    });
  }

  notify(method: string): void {
    this.child.proc.stdin!.write(`{"jsonrpc":"2.0","method":"${method}"}\n`);
  }

  /** Ends the child's stdin (a stdio server exits when it ends, and mcp-warden with it); stops it by PID if it has not exited within 3 s. */
  async close(): Promise<void> {
    clearInterval(this.watchdog);
    this.child.proc.stdin!.end();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, 3000)))]);
    clearTimeout(timer);
    await this.child.stop();
  }
}
