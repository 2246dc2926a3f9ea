#!/usr/bin/env node
import { buildProgram } from './cli-program.ts';

buildProgram()
  .parseAsync()
  .catch((err: unknown) => {
    console.error(`mcp-warden: ${(err as Error).message}`);
    process.exit(1);
  });
