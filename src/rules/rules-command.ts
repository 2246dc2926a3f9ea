// What `mcp-warden rules [RULE]` (alias `explain`) prints: the catalogue, one rule's explanation, or
// every explanation; an unknown name fails with the list of names.
import { rulesJson, rulesMarkdown, rulesText } from './catalogue.ts';
import { docsUrl, explanationMarkdown, explanationOf, explanationsMarkdown, explanationText } from './explain.ts';
import type { Rule } from './types.ts';

export type RulesFormat = 'text' | 'markdown' | 'json';
export type RulesOutput = { ok: true; text: string } | { ok: false; error: string };

/** A rule's explanation as JSON: its catalogue entry, why, bad, good, fix and the docs link. */
const explanationJson = (r: Rule) => {
  const { why, bad, good, fix } = explanationOf(r.id);
  return { id: r.id, severity: r.severity, group: r.group, summary: r.summary, source: r.source, why, bad, good, fix, docs: docsUrl(r.id) };
};

export function renderRules(rules: readonly Rule[], name: string | undefined, opts: { format: RulesFormat; all?: boolean }): RulesOutput {
  if (name !== undefined) {
    const rule = rules.find((r) => r.id === name);
    if (!rule) return { ok: false, error: `unknown rule "${name}"; the rules are:\n${rules.map((r) => `  ${r.id}`).join('\n')}` };
    const text = {
      text: explanationText,
      markdown: (r: Rule) => `### ${r.id}\n\n${explanationMarkdown(r)}`,
      json: (r: Rule) => JSON.stringify(explanationJson(r), null, 2),
    }[opts.format](rule);
    return { ok: true, text };
  }
  if (opts.all) {
    const text = {
      text: () => rules.map(explanationText).join('\n\n\n'),
      markdown: () => explanationsMarkdown(rules),
      json: () => JSON.stringify(rules.map(explanationJson), null, 2),
    }[opts.format]();
    return { ok: true, text };
  }
  return { ok: true, text: { text: rulesText, markdown: rulesMarkdown, json: rulesJson }[opts.format](rules) };
}
