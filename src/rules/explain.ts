// A rule's explanation as each view shows it: the text `mcp-warden rules RULE` prints, the Markdown
// section docs/rules.md holds (and SARIF's help.markdown), and the link every finding carries.
// What is wrong is the rule's summary; why, the exchanges and the fix come from explanations/.
import { FRAMEWORKS, lineage, type FrameworkId } from '../frameworks/frameworks.ts';
import { describeTransports, describeVersions, sourceMarkdown } from './catalogue.ts';
import { EXPLANATIONS, type Explanation } from './explanations/index.ts';
import type { FrameworkFix } from './explanations/types.ts';
import type { Rule } from './types.ts';

/**
 * Where docs/rules.md is read on the web: the repository of package.json's `repository`, its main
 * branch (a test keeps the two equal). Each rule's section is the anchor of its id.
 */
export const RULES_DOCS = 'https://github.com/mcp-warden/mcp-warden/blob/main/docs/rules.md';

/** The link to a rule's section of docs/rules.md: `<RULES_DOCS>#<rule-id>`. */
export const docsUrl = (ruleId: string): string => `${RULES_DOCS}#${ruleId}`;

/** The docs link of a rule that has an explanation; undefined for any other id (a probe's own expectation, a rule of another version). */
export const ruleDocs = (ruleId: string): string | undefined => (EXPLANATIONS.has(ruleId) ? docsUrl(ruleId) : undefined);

/** A rule's explanation; throws for a rule without one (a test keeps every rule explained). */
export function explanationOf(ruleId: string): Explanation {
  const found = EXPLANATIONS.get(ruleId);
  if (!found) throw new Error(`no explanation for rule ${ruleId}`);
  return found;
}

/** What to change for a rule's findings, in one line; undefined for a rule this version does not know (a log from another). */
export const ruleFix = (ruleId: string): string | undefined => EXPLANATIONS.get(ruleId)?.fix;

/** The fix for a rule's findings in `framework` (or the broader framework it is within), when it differs from the general one. */
export function frameworkFixOf(ruleId: string, framework: FrameworkId): { framework: FrameworkId; fix: FrameworkFix } | undefined {
  const fixes = EXPLANATIONS.get(ruleId)?.frameworks;
  const found = lineage(framework).find((id) => fixes?.[id]);
  return found ? { framework: found, fix: fixes![found]! } : undefined;
}

/** A framework fix in one paragraph: what to change, and where the SDK does it, the version that fixed it or its issue, and what to do meanwhile. */
export function frameworkFixText(fix: FrameworkFix): string {
  const sdk = fix.sdk;
  const later = sdk
    ? [sdk.fixedIn ? `Fixed in ${sdk.fixedIn}.` : '', sdk.issue ? `SDK issue: ${sdk.issue}.` : '', `Meanwhile: ${sdk.meanwhile}.`]
    : [];
  return [fix.fix, ...later].filter(Boolean).join(' ');
}

/** A rule's fix for the server's framework in one line (`<framework>: <fix>`), when the explanation has one for it. */
export function frameworkFixLine(ruleId: string, framework: FrameworkId | undefined): string | undefined {
  const found = framework ? frameworkFixOf(ruleId, framework) : undefined;
  return found ? `${FRAMEWORKS[found.framework].label}: ${frameworkFixText(found.fix)}` : undefined;
}

const frameworkEntries = (e: Explanation): Array<[FrameworkId, FrameworkFix]> =>
  Object.entries(e.frameworks ?? {}) as Array<[FrameworkId, FrameworkFix]>;

const indent = (text: string, by: string): string =>
  text
    .split('\n')
    .map((line) => `${by}${line}`)
    .join('\n');

/** The explanation for a terminal: what is wrong, why (quoted, with its version), bad and good, the fix, the link. */
export function explanationText(rule: Rule): string {
  const e = explanationOf(rule.id);
  return [
    `${rule.id}  (${rule.severity}, ${rule.party}; versions ${describeVersions(rule.versions)}; transports ${describeTransports(rule)}; group ${rule.group})`,
    '',
    'What is wrong',
    indent(rule.summary, '  '),
    '',
    `Why (${e.why.from})`,
    indent(`"${e.why.text}"`, '  '),
    indent(rule.source.split(', ').join('\n'), '  '),
    '',
    'Bad',
    indent(e.bad, '  '),
    '',
    'Good',
    indent(e.good, '  '),
    '',
    'Fix',
    indent(e.fix, '  '),
    ...frameworkEntries(e).flatMap(([id, f]) => [
      '',
      `Fix in ${FRAMEWORKS[id].label}`,
      indent(frameworkFixText(f), '  '),
      ...(f.snippet ? ['', indent(f.snippet, '    ')] : []),
      indent(`(read in ${f.source})`, '  '),
    ]),
    '',
    `More: ${docsUrl(rule.id)}`,
  ].join('\n');
}

/** The fence language of a framework's snippets. */
const SNIPPET_LANGUAGE: Readonly<Record<FrameworkId, string>> = {
  'typescript-sdk': 'ts',
  'typescript-sdk-v1-mcpserver': 'ts',
  'typescript-sdk-v1-server': 'ts',
  'typescript-sdk-v2': 'ts',
  'python-sdk': 'python',
  fastmcp: 'python',
  'go-sdk': 'go',
  'mcp-go': 'go',
  rmcp: 'rust',
  'java-sdk': 'java',
  'csharp-sdk': 'csharp',
};

const fence = (text: string): string => `\`\`\`text\n${text}\n\`\`\``;

/** The explanation's body in Markdown (no heading): SARIF's help.markdown, and each section of docs/rules.md. */
export function explanationMarkdown(rule: Rule): string {
  const e = explanationOf(rule.id);
  return [
    `**What is wrong:** ${rule.summary}.`,
    '',
    `**Why** (${e.why.from}): "${e.why.text}" (${sourceMarkdown(rule.source)})`,
    '',
    '**Bad:**',
    '',
    fence(e.bad),
    '',
    '**Good:**',
    '',
    fence(e.good),
    '',
    `**Fix:** ${e.fix}`,
    ...frameworkEntries(e).flatMap(([id, f]) => [
      '',
      `**In ${FRAMEWORKS[id].label}:** ${frameworkFixText(f)}`,
      ...(f.snippet ? ['', `\`\`\`${SNIPPET_LANGUAGE[id]}\n${f.snippet}\n\`\`\``] : []),
      '',
      `<sub>Read in ${f.source}.</sub>`,
    ]),
  ].join('\n');
}

/** docs/rules.md's explanations: a section per rule, anchored by its id (`docs/rules.md#<rule-id>`). */
export function explanationsMarkdown(rules: readonly Rule[]): string {
  return rules
    .map(
      (r) =>
        `### ${r.id}\n\n${r.severity}, ${r.party}; versions ${describeVersions(r.versions)}; transports ${describeTransports(r)}; group \`${r.group}\`\n\n${explanationMarkdown(r)}`,
    )
    .join('\n\n');
}
