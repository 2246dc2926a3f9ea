// docs/rules.md's table of the signs a framework is told by (a test keeps the page equal to it).
import { FRAMEWORKS } from './frameworks.ts';
import { SIGN_LIST } from './recognize.ts';

export function signsMarkdown(): string {
  return [
    '| framework | told by | confidence |',
    '|---|---|---|',
    ...SIGN_LIST.map((s) => `| ${FRAMEWORKS[s.framework].label} | ${s.because.replace(/\|/g, '\\|')} | ${s.confidence} |`),
  ].join('\n');
}
