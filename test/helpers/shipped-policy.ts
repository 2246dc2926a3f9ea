// A shipped policy (config/<name>.yaml) with some rules set otherwise: for tests of what one rule's
// action does where the shipped file lets another act first (request-envelope blocks a body that
// is not JSON before the server's answer to it could be rewritten).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { loadPolicyText } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import type { Action } from '../../src/verdicts.ts';

export async function shippedWith(name: 'audit' | 'enforce', rules: Record<string, Action>): Promise<Policy> {
  const path = new URL(`../../config/${name}.yaml`, import.meta.url);
  const doc = parseDocument(await readFile(path, 'utf8'));
  for (const [rule, action] of Object.entries(rules)) doc.setIn(['rules', rule], action);
  const loaded = loadPolicyText(doc.toString(), `${name}.yaml, changed`, { rewritable: REWRITABLE });
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
  return loaded.policy;
}
