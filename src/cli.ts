#!/usr/bin/env node
import { buildProgram } from './cli-program.ts';

buildProgram()
  .parseAsync()
  .catch((err: unknown) => {
    console.error(`mcp-warden: ${(err as Error).message}`);
    // An error may say how to exit (3: an address it cannot listen on); anything else is 1.
    process.exit((err as { exitCode?: number }).exitCode ?? 1);
  });
