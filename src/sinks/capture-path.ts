// Whether the capture file a policy names can be appended to: checked by `policy check` and at
// start-up, so a path the process cannot write (a directory that does not exist, one owned by
// another user, as config/ in the image) stops the start with a message instead of failing
// silently at the first exchange. Access is checked, nothing is created.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** Why `path` cannot be appended to by this process, or undefined when it can. */
async function whyUnwritable(path: string): Promise<string | undefined> {
  const file = await stat(path).catch(() => undefined);
  if (file?.isDirectory()) return 'it is a directory';
  const dir = dirname(resolve(path));
  if (!file) {
    const parent = await stat(dir).catch(() => undefined);
    if (!parent) return `its directory ${dir} does not exist`;
    if (!parent.isDirectory()) return `${dir} is not a directory`;
  }
  try {
    await access(file ? path : dir, constants.W_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return file ? `the file is not writable by this process (${code})` : `its directory ${dir} is not writable by this process (${code})`;
  }
}

/** What stops a start or fails `policy check` when the policy's capture file cannot be written, or undefined. */
export async function captureProblem(policy: { capture: { path: string } | undefined }): Promise<string | undefined> {
  if (!policy.capture) return undefined;
  const why = await whyUnwritable(policy.capture.path);
  return why === undefined
    ? undefined
    : `capture.path ${policy.capture.path} cannot be written: ${why} (in the image, write under /var/lib/mcp-warden and mount a volume there)`;
}
