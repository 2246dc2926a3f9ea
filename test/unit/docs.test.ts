// The documentation as a newcomer meets it: README.md is a front page (install, quick start and
// policy on the first screen, a link to every docs/ page), every relative link and #anchor of
// README.md and docs/*.md lands somewhere, and every mcp-warden command a shell block shows names a
// command and options the CLI has (buildProgram(), read, never run). Pure: files are read, nothing
// is started.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command, Option } from 'commander';
import { buildProgram } from '../../src/cli-program.ts';
import { docPages, fencesOf } from '../helpers/doc-blocks.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Nothing is on npm yet: a shell block must not show `npx mcp-warden` as a way to run it. Set to true once it is published. */
const PUBLISHED_ON_NPM = false;

/**
 * Command lines deliberately not checked, with why (exact text after joining continuations). Not
 * checked at all, being no shell: commands inside yaml (Kubernetes `args:`) and json (a client's
 * `mcpServers` `args`) blocks, and sample output in ```text blocks (whose first line may echo the
 * command it came from).
 */
const EXCLUDED: ReadonlyMap<string, string> = new Map([]);

/** A page's text outside fenced blocks (headings and links in code are neither). */
function prose(text: string): string {
  let inFence = false;
  return text
    .split('\n')
    .filter((line) => {
      if (/^`{3,}/.test(line)) inFence = !inFence;
      else return !inFence;
      return false;
    })
    .join('\n');
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped but `-` and `_`, spaces to `-`; repeats get `-1`, `-2`. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(text).split('\n')) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const words = heading[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text
      .replace(/<[^>]+>/g, '') // inline HTML
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(words) ?? 0;
    seen.set(words, n + 1);
    anchors.add(n === 0 ? words : `${words}-${n}`);
  }
  return anchors;
}

/** The inline links and images of a page's prose: `[text](target)`. */
function linksOf(text: string): string[] {
  const withoutCode = prose(text).replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

const pages = docPages();
const readme = pages.get('README.md')!;

test('README.md is a front page: under 300 lines, with install, quick start and policy on its first screen', () => {
  const lines = readme.split('\n');
  assert.ok(lines.length < 300, `README.md has ${lines.length} lines; move detail into docs/`);
  const first = lines.slice(0, 60).join('\n');
  assert.match(first, /^#{2,3} Install\b/m, 'an Install heading in the first 60 lines');
  assert.ok(first.includes('npm ci && npm run demo'), 'the demo command in the first 60 lines');
  assert.ok(first.includes('npm ci && npm test'), 'the test command in the first 60 lines');
  assert.match(first, /^#{2,3} Policy\b/m, 'a Policy heading in the first 60 lines');
  assert.match(first, /\]\(docs\/policy\.md(#[^)]*)?\)/, 'a link to docs/policy.md in the first 60 lines');
});

test('README.md links every docs/ page', () => {
  const linked = new Set(linksOf(readme).map((target) => target.split('#')[0]));
  const docs = [...pages.keys()].filter((p) => p.startsWith('docs/'));
  assert.ok(docs.length > 0, 'docs/ has pages');
  for (const page of docs) assert.ok(linked.has(page), `README.md does not link ${page}`);
});

test('every relative link and #anchor in README.md and docs/*.md resolves', () => {
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOfFile = (path: string): Set<string> => {
    let anchors = anchorCache.get(path);
    if (!anchors) {
      anchors = anchorsOf(pages.get(path) ?? readFileSync(join(ROOT, path), 'utf8'));
      anchorCache.set(path, anchors);
    }
    return anchors;
  };
  const broken: string[] = [];
  let checked = 0;
  for (const [page, text] of pages) {
    for (const target of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      checked++;
      const hash = target.indexOf('#');
      const file = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const path = file === '' ? page : normalize(join(dirname(page), file));
      if (path.startsWith('..') || !existsSync(join(ROOT, path))) {
        broken.push(`${page}: ${target} (no file ${path})`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!path.endsWith('.md')) {
        broken.push(`${page}: ${target} (an #anchor into a file that is not markdown)`);
        continue;
      }
      if (!anchorsOfFile(path).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${path})`);
    }
  }
  assert.ok(checked > 50, `only ${checked} relative links found: is the link reader broken?`);
  assert.deepEqual(broken, [], 'links that do not resolve');
});

// ---- the commands shown ----

/** Splits a shell line into words: quotes kept together (and removed), nothing expanded. */
function words(line: string): string[] {
  const out: string[] = [];
  let word = '';
  let quote: string | undefined;
  let inWord = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) out.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) out.push(word);
  return out;
}

/** A line without its trailing `# comment` (a `#` after a space, outside quotes). */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

/** The words of a command without its redirections (`> file`, `2>&1`, `< in`). */
function withoutRedirections(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (/^\d*(>>?|<)$/.test(argv[i]!))
      i++; // the operator, then its file
    else if (!/^\d*(>>?|<)./.test(argv[i]!)) out.push(argv[i]!);
  }
  return out;
}

/** The words after the program when `argv` runs mcp-warden (however it is started), else undefined. */
function mcpWardenArgs(argv: string[]): string[] | undefined {
  let rest = withoutRedirections(argv);
  while (rest.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(rest[0]!)) rest = rest.slice(1); // VAR=value before the command
  const [first, ...more] = rest;
  if (first === 'mcp-warden') return more;
  if (first === 'npx') {
    const at = more.findIndex((w) => !w.startsWith('-'));
    return more[at] === 'mcp-warden' ? more.slice(at + 1) : undefined;
  }
  if (first === 'node') {
    const script = more.findIndex((w) => /(^|\/)(dist\/cli\.js|src\/cli\.ts)$/.test(w));
    return script === -1 ? undefined : more.slice(script + 1);
  }
  if (first === 'docker' && more[0] === 'run') {
    const image = more.findIndex((w) => w === 'mcp-warden' || w.startsWith('mcp-warden:'));
    return image === -1 ? undefined : more.slice(image + 1);
  }
  return undefined;
}

interface Shown {
  where: string;
  line: string;
  args: string[];
}

/** Every mcp-warden command line of the shell blocks (sh, bash, shell, console, or no info string). */
function shownCommands(): Shown[] {
  const shown: Shown[] = [];
  for (const [page, text] of pages) {
    for (const fence of fencesOf(page, text)) {
      if (!['', 'sh', 'bash', 'shell', 'zsh', 'console'].includes(fence.info)) continue;
      const joined = fence.lines
        .map((l) => l.text)
        .join('\n')
        .replace(/\\\n/g, ' ')
        .split('\n');
      for (const raw of joined) {
        let line = raw.trim();
        if (fence.info === 'console') {
          if (!line.startsWith('$ ')) continue; // the rest is output
          line = line.slice(2);
        }
        line = withoutComment(line).trim();
        if (line === '') continue;
        for (const part of line.split(/\s+(?:&&|\|\||\||;)\s+/)) {
          const args = mcpWardenArgs(words(part.replace(/;$/, '')));
          if (args) shown.push({ where: page, line: part, args });
        }
      }
    }
  }
  return shown;
}

const HELP = ['-h', '--help'];

/** What is wrong with `mcp-warden ARGS` against the program's commands and options; [] when nothing. */
function problemsOf(program: Command, args: readonly string[], { operandsShown = true } = {}): string[] {
  // A synopsis writes optional parts in brackets: `[--policy FILE]` is `--policy FILE`.
  const argv = args.map((a) => a.replace(/^\[+/, '').replace(/\]+$/, '')).filter((a) => a !== '');
  if (argv.length === 0) return ['no command named'];
  if (['-V', '--version', ...HELP].includes(argv[0]!)) return argv.length === 1 ? [] : [`${argv[0]} takes nothing after it`];
  const find = (parent: Command, name: string) => parent.commands.find((c) => c.name() === name || c.aliases().includes(name));
  let command = find(program, argv[0]!);
  if (!command) return [`no command "${argv[0]}" (commands: ${program.commands.map((c) => c.name()).join(', ')})`];
  let at = 1;
  if (command.commands.length > 0) {
    const sub = argv[at] === undefined ? undefined : find(command, argv[at]!);
    if (!sub && !HELP.includes(argv[at] ?? ''))
      return [`no command "${command.name()} ${argv[at] ?? ''}" (${command.commands.map((c) => c.name()).join(', ')})`];
    if (sub) command = sub;
    if (sub) at++;
  }
  const name = command.parent === program ? command.name() : `${command.parent!.name()} ${command.name()}`;
  const problems: string[] = [];
  const byLong = new Map<string, Option>();
  const byShort = new Map<string, Option>();
  for (const option of command.options) {
    if (option.long) byLong.set(option.long, option);
    if (option.short) byShort.set(option.short, option);
  }
  let operands = 0;
  for (; at < argv.length; at++) {
    const word = argv[at]!;
    if (word === '--') {
      operands += argv.length - at - 1; // the rest is a server's command line (stdio, check --stdio)
      break;
    }
    if (!word.startsWith('-') || word === '-') {
      operands++;
      continue;
    }
    if (HELP.includes(word)) continue;
    const eq = word.indexOf('=');
    const flag = eq === -1 ? word : word.slice(0, eq);
    const option = flag.startsWith('--') ? byLong.get(flag) : byShort.get(flag);
    if (!option) {
      problems.push(`mcp-warden ${name} has no option ${flag}`);
      continue;
    }
    if (!option.required && !option.optional) {
      if (eq !== -1) problems.push(`${flag} of mcp-warden ${name} takes no value`);
      continue;
    }
    const value = eq !== -1 ? word.slice(eq + 1) : argv[++at];
    if (value === undefined) {
      if (option.required) problems.push(`${flag} of mcp-warden ${name} needs a value`);
      continue;
    }
    // A literal value (not a placeholder such as FILE, <x>, "$VAR" or ...) must be one of the choices; `a|b` shows several.
    if (option.argChoices && /^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)*$/.test(value))
      for (const choice of value.split('|'))
        if (!option.argChoices.includes(choice))
          problems.push(`${flag} of mcp-warden ${name} takes ${option.argChoices.join('|')}, not "${choice}"`);
  }
  const required = command.registeredArguments.filter((a) => a.required).length;
  if (operandsShown && operands < required && !argv.some((a) => HELP.includes(a)))
    problems.push(`mcp-warden ${name} needs ${required} operand(s), the line gives ${operands}`);
  return problems;
}

test('every mcp-warden command a shell block shows names a command and options the CLI has', () => {
  const program = buildProgram();
  const shown = shownCommands();
  assert.ok(shown.length >= 20, `only ${shown.length} commands found in the shell blocks: is the block reader broken?`);
  const problems: string[] = [];
  for (const { where, line, args } of shown) {
    if (EXCLUDED.has(line)) continue;
    for (const problem of problemsOf(program, args)) problems.push(`${where}: ${line}\n    ${problem}`);
    if (!PUBLISHED_ON_NPM && /^npx\s+(-y\s+)?mcp-warden\b/.test(line))
      problems.push(`${where}: ${line}\n    mcp-warden is not on npm yet: show mcp-warden (node dist/cli.js, npm link) instead`);
  }
  assert.deepEqual(problems, [], 'commands the CLI would refuse');
  // The commands the docs show cover every command the CLI has.
  const named = new Set(shown.map((s) => s.args[0]));
  for (const command of program.commands) assert.ok(named.has(command.name()), `no shell block shows mcp-warden ${command.name()}`);
});

test('every `mcp-warden COMMAND ...` in inline code names a command and options the CLI has', () => {
  const program = buildProgram();
  const problems: string[] = [];
  let checked = 0;
  for (const [page, text] of pages) {
    for (const span of prose(text).matchAll(/`(mcp-warden [a-z][^`]*)`/g)) {
      const args = mcpWardenArgs(words(span[1]!));
      if (!args) continue;
      checked++;
      // Prose names a command without its operands (`mcp-warden replay`): only the command and its options are checked.
      for (const problem of problemsOf(program, args, { operandsShown: false })) problems.push(`${page}: ${span[1]}\n    ${problem}`);
    }
  }
  assert.ok(checked >= 10, `only ${checked} inline commands found`);
  assert.deepEqual(problems, [], 'inline commands the CLI would refuse');
});

test('the command checker refuses what the CLI would refuse', () => {
  const program = buildProgram();
  assert.deepEqual(problemsOf(program, ['proxy', '--upstream', 'http://127.0.0.1:3000/mcp', '--listen', '127.0.0.1:8787']), []);
  assert.deepEqual(problemsOf(program, ['stdio', '[--policy', 'FILE]', '--', 'node', 'server.js', '--port', '1']), []);
  assert.deepEqual(problemsOf(program, ['policy', 'check', 'bad.yaml']), []);
  assert.deepEqual(problemsOf(program, ['replay', 'CAPTURE', '[--format', 'text|json]']), []);
  assert.deepEqual(problemsOf(program, ['proxy', '--upstreem', 'http://h/mcp']), ['mcp-warden proxy has no option --upstreem']);
  assert.deepEqual(problemsOf(program, ['stdio', '--admin', '127.0.0.1:9090', '--', 'x']), ['mcp-warden stdio has no option --admin']);
  assert.deepEqual(problemsOf(program, ['rules', '--format', 'yaml']), [
    '--format of mcp-warden rules takes text|markdown|json, not "yaml"',
  ]);
  assert.deepEqual(problemsOf(program, ['policy', 'lint', 'x.yaml']), ['no command "policy lint" (check, schema)']);
  assert.deepEqual(problemsOf(program, ['serve']).length, 1);
  assert.deepEqual(problemsOf(program, ['replay']), ['mcp-warden replay needs 1 operand(s), the line gives 0']);
  assert.deepEqual(mcpWardenArgs(words('docker run --rm -p 8787:8787 mcp-warden proxy --listen 0.0.0.0:8787')), [
    'proxy',
    '--listen',
    '0.0.0.0:8787',
  ]);
  assert.deepEqual(mcpWardenArgs(words("MCP_WARDEN_ADMIN=127.0.0.1:9090 node dist/cli.js check 'http://h/mcp'")), [
    'check',
    'http://h/mcp',
  ]);
  assert.equal(mcpWardenArgs(words('git clone https://example.com/x.git mcp-warden')), undefined);
  assert.equal(mcpWardenArgs(words('cd mcp-warden')), undefined);
  assert.deepEqual(mcpWardenArgs(words('mcp-warden proxy --upstream http://h/mcp > warden.log 2>&1')), [
    'proxy',
    '--upstream',
    'http://h/mcp',
  ]);
});
