// `mcp-warden check` as tests run it: runCheck with the test's bounds, and the check command on a
// fresh program in this process (its output and exit code collected, nothing written to the
// process's own streams).
import { Command } from 'commander';
import type { CheckReport } from '../../src/check/report.ts';
import { CHECK_DEFAULTS } from '../../src/check/defaults.ts';
import { runCheck, type CheckOptions } from '../../src/check/run.ts';
import { registerCheckCommand } from '../../src/commands/check.ts';

/** runCheck against `url` with short bounds (2 s a probe, 20 s in all) unless `over` says otherwise. */
export function check(url: CheckOptions['url'], over: Partial<CheckOptions> = {}): Promise<CheckReport> {
  return runCheck({
    url,
    headers: {},
    safeTools: [],
    toolCalls: true,
    ...CHECK_DEFAULTS,
    probeTimeoutMs: 2000,
    timeoutMs: 20_000,
    clientVersion: '0.0.0-test',
    ...over,
  });
}

export interface Ran {
  code: number | undefined;
  stdout: string;
  stderr: string;
}

/** Runs `check ...args` on a fresh program, in this process. */
export function checkInProcess(...args: string[]): Promise<Ran> {
  return checkOnScreen(undefined, ...args);
}

/** Runs `check ...args` as checkInProcess does, its output on a screen `columns` wide. */
export async function checkOnScreen(columns: number | undefined, ...args: string[]): Promise<Ran> {
  const ran: Ran = { code: undefined, stdout: '', stderr: '' };
  const program = new Command('mcp-warden')
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: (t) => void (ran.stderr += t) });
  registerCheckCommand(program, {
    stdout: (t) => void (ran.stdout += t),
    stderr: (t) => void (ran.stderr += t),
    exit: (c) => void (ran.code = c),
    isTTY: false,
    columns,
  });
  await program.parseAsync(['node', 'mcp-warden', 'check', ...args]);
  return ran;
}
