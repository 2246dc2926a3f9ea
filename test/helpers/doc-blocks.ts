// The generated blocks of the documentation: a table or drawing between `<!-- name -->` and
// `<!-- /name -->` markers, in README.md or any page of docs/. Tests compare each with what the
// code generates, wherever the block lives.
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const ROOT = new URL('../../', import.meta.url);

/** README.md and every docs/*.md page, by path from the repository's root. */
export function docPages(): Map<string, string> {
  const pages = new Map([['README.md', readFileSync(new URL('README.md', ROOT), 'utf8')]]);
  const docs = new URL('docs/', ROOT);
  if (existsSync(docs))
    for (const name of readdirSync(docs)
      .filter((n) => n.endsWith('.md'))
      .sort())
      pages.set(`docs/${name}`, readFileSync(new URL(name, docs), 'utf8'));
  return pages;
}

/** The page that holds block `name` (its path from the root, its text); throws unless exactly one does. */
export function pageOf(name: string): { path: string; text: string } {
  const found = [...docPages()].filter(([, text]) => text.includes(`<!-- ${name} -->`));
  if (found.length !== 1)
    throw new Error(`block <!-- ${name} --> is in ${found.length} pages (${found.map(([p]) => p).join(', ')}), not one`);
  return { path: found[0]![0], text: found[0]![1] };
}

/** The text between the markers of block `name`, trimmed. */
export function docBlock(name: string): string {
  return pageOf(name).text.split(`<!-- ${name} -->`)[1]?.split(`<!-- /${name} -->`)[0]?.trim() ?? '';
}

/** A line of a page, with its number (from 1). */
export interface DocLine {
  line: number;
  text: string;
}

/** One ```-fenced block of a page: where it opens, its info string (lower case), its lines. */
export interface Fence {
  page: string;
  line: number;
  info: string;
  lines: DocLine[];
}

/** The ```-fenced blocks of a page, in order. */
export function fencesOf(page: string, text: string): Fence[] {
  const out: Fence[] = [];
  let open: Fence | undefined;
  text.split('\n').forEach((line, i) => {
    const fence = /^(`{3,})(.*)$/.exec(line);
    if (fence && !open) open = { page, line: i + 1, info: fence[2]!.trim().toLowerCase(), lines: [] };
    else if (fence && open && fence[2]!.trim() === '') {
      out.push(open);
      open = undefined;
    } else if (open) open.lines.push({ line: i + 1, text: line });
  });
  return out;
}
