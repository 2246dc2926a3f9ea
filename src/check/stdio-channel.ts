// `check --stdio -- COMMAND ARGS`: the server runs as a child of the check, each probe is one line
// on its stdin, and its answer is the line on its stdout that carries the probe's id. The child's
// stderr is kept (bounded) for the report when it cannot start. Closing ends its stdin, then, as
// the SDK's client does, SIGTERM and SIGKILL for a child that does not exit.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { LineSplitter } from '../codec/line-splitter.ts';
import type { Via } from '../exchange/flow.ts';
import { type CheckChannel, type HttpAnswer, MessageQueue, type Outgoing, streamAnswer } from './channel.ts';

const QUEUE = 1_000;
const STDERR_KEPT = 2_000;
/** How long a child has to exit once its stdin is closed, then after SIGTERM. */
const GRACE_MS = 2_000;

export interface StdioTarget {
  command: string;
  args: readonly string[];
}

export class StdioChannel implements CheckChannel {
  readonly via: Via = { wire: 'stdio', session: 'check', sessionId: undefined };
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly queue = new MessageQueue(QUEUE);
  private readonly exited: Promise<void>;
  private stderr = '';

  constructor(
    readonly target: StdioTarget,
    private readonly limits: { probeTimeoutMs: number; maxBytes: number },
    private readonly deadline: AbortSignal,
  ) {
    this.child = spawn(target.command, [...target.args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const lines = new LineSplitter(limits.maxBytes, {
      line: (raw) => this.queue.push(raw.toString('utf8')),
      // A line past --max-bytes is not read; the probe waiting for it times out.
      oversize: () => undefined,
    });
    this.child.stdout.on('data', (chunk: Buffer) => lines.push(chunk));
    this.child.stderr.on('data', (chunk: Buffer) => {
      if (this.stderr.length < STDERR_KEPT) this.stderr += chunk.toString('utf8').slice(0, STDERR_KEPT - this.stderr.length);
    });
    this.child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      this.child.once('error', (err: NodeJS.ErrnoException) => {
        this.queue.end({ reason: 'unreachable', detail: `cannot start ${target.command}: ${err.message}` });
        resolve();
      });
      this.child.once('close', (code, signal) => {
        lines.end();
        const how = signal ? `signal ${signal}` : `code ${code}`;
        this.queue.end({
          reason: 'reset',
          detail: `the server process exited (${how})${this.stderr ? `: ${this.stderr.trim().slice(-200)}` : ''}`,
        });
        resolve();
      });
    });
  }

  async send(out: Outgoing, bounded = true): Promise<HttpAnswer> {
    const started = performance.now();
    // No DELETE on stdio: the session ends with the process.
    if (out.method === 'DELETE' || out.body === undefined) return streamAnswer('stdio', [], undefined, started);
    if (this.queue.failure) return streamAnswer('stdio', [], this.queue.failure, started);
    this.queue.clear();
    this.child.stdin.write(`${out.body.replace(/\r?\n/g, ' ')}\n`);
    if (out.awaitId === undefined) return streamAnswer('stdio', [], undefined, started);
    const timeout = AbortSignal.timeout(this.limits.probeTimeoutMs);
    const { events, failure } = await this.queue.until(out.awaitId, bounded ? AbortSignal.any([timeout, this.deadline]) : timeout);
    return streamAnswer('stdio', events, failure, started);
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    for (const signal of [undefined, 'SIGTERM', 'SIGKILL'] as const) {
      if (signal) this.child.kill(signal);
      const done = await Promise.race([
        this.exited.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), GRACE_MS).unref()),
      ]);
      if (done) return;
    }
  }
}
