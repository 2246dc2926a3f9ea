// Which tool the argument probes call, and with what: arguments that fail the tool's inputSchema
// and always leave a required property out, so a server that validates (or even only checks for
// required properties) never runs the tool. Tools are ranked by their annotations (untrusted hints:
// https://modelcontextprotocol.io/specification/2025-06-18/server/tools): read-only first, then
// non-destructive, then unannotated; a tool annotated destructive is never picked. `--safe-tool NAME` names the only tools that may be called, and lifts those limits.
import { asRecord } from '../codec/json-value.ts';
import { validateArguments } from '../rules/tool-arguments.ts';
import type { ProbeContext } from './probe.ts';

export interface ArgumentPlan {
  tool: string;
  inputSchema: unknown;
  arguments: Record<string, unknown>;
  /** What is wrong with the arguments, for the report. */
  why: string;
}

export type Plan = ArgumentPlan | { skip: string };

const WRONG = { 'mcp-warden': 'deliberately the wrong type' };

/** A value of none of the types a property's schema allows. */
function wrongValue(type: unknown): unknown {
  const types = Array.isArray(type) ? type : [type];
  if (!types.includes('object')) return WRONG;
  if (!types.includes('string')) return 'mcp-warden: deliberately the wrong type';
  if (!types.includes('boolean')) return true;
  return undefined;
}

interface Candidate {
  name: string;
  schema: Record<string, unknown>;
  properties: Record<string, unknown>;
  required: string[];
  readOnly: boolean;
  rank: number;
}

function candidates(ctx: ProbeContext): Candidate[] {
  const annotations = new Map<string, Record<string, unknown>>();
  for (const t of ctx.toolList) {
    const tool = asRecord(t);
    if (typeof tool?.name === 'string') annotations.set(tool.name, asRecord(tool.annotations) ?? {});
  }
  const out: Candidate[] = [];
  for (const [name, tool] of ctx.tools) {
    const safe = ctx.safeTools.includes(name);
    if (ctx.safeTools.length > 0 && !safe) continue;
    const schema = asRecord(tool.inputSchema);
    if (!schema) continue;
    const a = annotations.get(name) ?? {};
    if (a.destructiveHint === true && a.readOnlyHint !== true && !safe) continue;
    const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
    if (required.length === 0 && !safe) continue;
    const readOnly = a.readOnlyHint === true;
    const rank = safe ? 0 : readOnly ? 1 : a.destructiveHint === false ? 2 : 3;
    out.push({ name, schema, properties: asRecord(schema.properties) ?? {}, required, readOnly: readOnly || safe, rank });
  }
  return out.sort((x, y) => x.rank - y.rank || x.name.localeCompare(y.name));
}

/** Arguments that fail the schema, checked with the same validator the rules use. */
function failing(c: Candidate, args: Record<string, unknown>, version: string): boolean {
  const verdict = validateArguments(c.schema, args, version);
  return verdict !== undefined && !verdict.valid;
}

/** A property given the wrong type, with a required property left out unless the tool may be called anyway. */
function typePlan(c: Candidate, version: string): ArgumentPlan | undefined {
  const typed = Object.entries(c.properties).filter(
    ([, s]) => asRecord(s)?.type !== undefined && wrongValue(asRecord(s)?.type) !== undefined,
  );
  // Prefer a required property, as long as another required one stays missing.
  const order = [
    ...typed.filter(([p]) => c.required.includes(p) && c.required.some((r) => r !== p)),
    ...typed.filter(([p]) => !c.required.includes(p) && c.required.length > 0),
    ...(c.readOnly ? typed : []),
  ];
  for (const [p, s] of order) {
    const args = { [p]: wrongValue(asRecord(s)?.type) };
    if (!failing(c, args, version)) continue;
    const missing = c.required.filter((r) => r !== p);
    const why = `"${p}" is not of type ${JSON.stringify(asRecord(s)?.type)}${missing.length > 0 ? `; required ${missing.map((m) => `"${m}"`).join(', ')} missing` : ''}`;
    return { tool: c.name, inputSchema: c.schema, arguments: args, why };
  }
  return undefined;
}

function missingPlan(c: Candidate, version: string): ArgumentPlan | undefined {
  if (c.required.length === 0 || !failing(c, {}, version)) return undefined;
  return { tool: c.name, inputSchema: c.schema, arguments: {}, why: `required ${c.required.map((r) => `"${r}"`).join(', ')} missing` };
}

/** Why no argument probe can run, if none can. */
function unavailable(ctx: ProbeContext): string | undefined {
  if (!ctx.toolCalls) return 'tool calls are off (--no-tool-calls)';
  if (ctx.tools.size === 0) return 'the server lists no tools';
  return undefined;
}

const NO_CANDIDATE = (ctx: ProbeContext): string =>
  ctx.safeTools.length > 0
    ? `no --safe-tool (${ctx.safeTools.join(', ')}) is listed by the server with a schema the probe can violate`
    : 'no tool has a required property to leave out (so a call could succeed); name one that is safe to call with --safe-tool';

/** The plans of both argument probes, the same tool for both when one allows it. */
export function argumentPlans(ctx: ProbeContext): { type: Plan; missing: Plan } {
  const off = unavailable(ctx);
  if (off) return { type: { skip: off }, missing: { skip: off } };
  const all = candidates(ctx);
  for (const c of all) {
    const type = typePlan(c, ctx.version);
    if (type) return { type, missing: missingPlan(c, ctx.version) ?? firstMissing(all, ctx) };
  }
  return { type: { skip: NO_CANDIDATE(ctx) }, missing: firstMissing(all, ctx) };
}

function firstMissing(all: readonly Candidate[], ctx: ProbeContext): Plan {
  for (const c of all) {
    const plan = missingPlan(c, ctx.version);
    if (plan) return plan;
  }
  return { skip: NO_CANDIDATE(ctx) };
}
