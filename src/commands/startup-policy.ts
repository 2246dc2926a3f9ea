// The policy a long-running command starts with: the file given, or the defaults. A file that does
// not validate stops the start, its errors on stderr as file:line:column.
import { formatPolicyError, readPolicyFile } from '../config/load.ts';
import { defaultPolicy } from '../config/compile.ts';
import type { Policy } from '../config/types.ts';
import { REWRITABLE } from '../rewrite/rewriters.ts';

export async function startupPolicy(path: string | undefined, command: string): Promise<{ policy: Policy; text: string | undefined }> {
  if (path === undefined) return { policy: defaultPolicy(REWRITABLE), text: undefined };
  const { text, result } = await readPolicyFile(path, { rewritable: REWRITABLE });
  if (!result.ok) {
    for (const e of result.errors) process.stderr.write(`${formatPolicyError(e)}\n`);
    throw new Error(`${path}: the policy does not validate (see above); the ${command} did not start`);
  }
  return { policy: result.policy, text };
}
