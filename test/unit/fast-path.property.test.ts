// The judging's fast paths give the same findings as the full path (issue 15).
//   1. FAILURE_WORDS (failure-statement.ts): a statement line without one of its words is not tried
//      against the built-in failure patterns. Sound when every line a built-in pattern matches holds
//      one of the words: checked on generated lines (the patterns' own words and phrases in any
//      case, order and company) and on every line of the precision corpus.
//   2. The rules as the engine runs them (silent-success's judgement read once for the four leak
//      rules, the gate, the rules a subject's answer can reach) find exactly what each rule finds
//      alone on a fresh copy of the subject, with the built-in patterns as copies the gate does not
//      know (so every pattern is tried on every line): generated tools/call answers.
// PROPERTY_RUNS_MULTIPLIER and PROPERTY_SEED work as in the other property files.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FAILURE_PATTERNS, FAILURE_WORDS } from '../../src/rules/failure-statement.ts';
import { RuleEngine } from '../../src/rules/engine.ts';
import { rulesWith } from '../../src/rules/index.ts';
import { LEAK_PATTERNS } from '../../src/rules/leak-patterns.ts';
import type { ExchangeSubject, Finding } from '../../src/rules/types.ts';
import { FAILURES, LEGIT } from '../fixtures/corpus/index.ts';
import { failureText, leakyText, runs, unicodeText } from '../helpers/arbitraries.ts';
import { ALL_VERSIONS, errorMsg, resultMsg, subject, toolResult } from '../helpers/subject.ts';

const matchesBuiltIn = (line: string): RegExp | undefined => FAILURE_PATTERNS.find((p) => line.search(p) >= 0);

/** Words and phrases the built-in patterns are made of, as they appear in failures and around them. */
const PIECES = [
  ...['Error', 'Exception', 'Fatal', 'Fatal error', 'TypeError', 'java.io.IOException', 'HTTPError', "('", 'An', 'unexpected'],
  ...['internal', 'unknown', 'has', 'occurred', 'occured', 'happened', 'was raised', 'was thrown', 'while', 'executing', 'calling'],
  ...['Failed', 'Failure', 'failed', 'Upload', 'Request', 'Connection', 'to', 'with', 'because', 'due', 'no', 'none', 'not'],
  ...['ENOENT', 'ECONNREFUSED', 'EACCES', 'EPERM', 'EPIPE', 'EEXIST', 'connect', 'open', 'getaddrinfo', "'/x'", '127.0.0.1:5432'],
  ...['File', 'not found', 'Not found', "User 'bob'", 'Issue #9999', 'Invalid', 'input', 'API key', 'Permission denied'],
  ...['Access denied', 'Unauthorized', 'Unauthorised', 'Forbidden', 'Unable to', 'Could not', "Couldn't", 'Cannot', "Can't"],
  ...['find any', 'be', 'Deployment', 'The note', 'Something went wrong', "I'm sorry,", 'but', 'Oops!', 'Whoops', 'Unfortunately'],
  ...['we are', 'unable', 'temporarily unavailable', 'Search is', '<b>', 'timed out', 'after 30000ms', 'the', 'query', 'operation'],
  ...['Your', 'authentication', 'session', 'access token', 'credentials', 'has', 'expired', 'been revoked', 'HTTP/1.1', 'HTTP/2'],
  ...['404', '503', '429', '200', 'Bad Request', 'Method Not Allowed', 'Request Timeout', 'Conflict', 'Too Many Requests'],
  ...['Internal Server Error', 'Bad Gateway', 'Service Unavailable', 'Gateway Timeout', 'Erreur', 'Fehler', 'Errore', 'Erro'],
  ...['Fout', 'Fel', 'Virhe', 'Błąd', 'BŁĄD', 'Chyba', 'Hata', 'Ошибка', 'ОШИБКА', 'Помилка', '错误', '錯誤', 'エラー', '오류', '：'],
  ...['Fehler beim', 'bei der', 'während', 'Erro ao', 'na', 'durante', 'Error al', 'en la', 'Erreur lors', 'pendant', 'nel'],
  ...['Lo sentimos', 'no pudimos', 'no se pudo', 'no fue posible', 'Désolé', 'Desolé', 'DÉSOLÉ', 'Entschuldigung', 'Leider'],
  ...['konnte', 'nicht möglich', 'Desculpe', 'Infelizmente', 'não foi', 'não conseguimos', 'Purtroppo', 'non è stato', 'impossible'],
  ...['送信', 'に失敗しました', 'できませんでした', '发送邮件', '失败', '失敗', '，', '。', "Impossible d'", 'Impossible de', 'Échec'],
  ...['ÉCHEC', 'Echec', 'No se puede', 'Não é possível', 'Konnte nicht', 'Kann nicht', 'Non è possibile', 'Nie można', 'Не удалось'],
  ...['无法', '無法', 'Paris', '18 C', 'results', 'ok', 'done', 'Passed: 42', '3 tests', 'means', '?', 'x', 'level=info'],
];
const SEPARATORS = [' ', '', ':', ': ', '!', ' - ', '-', '.', '\t', ', ', "'", '"', '(', '#', '/'];

const recase = fc.constantFrom<(s: string) => string>(
  (s) => s,
  (s) => s.toLowerCase(),
  (s) => s.toUpperCase(),
  (s) => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase(),
);
const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PIECES) },
  { weight: 1, arbitrary: unicodeText(8) },
  { weight: 1, arbitrary: failureText },
);
/** A statement line: pieces in any case, joined by separators; most open like a failure. */
const line: fc.Arbitrary<string> = fc
  .array(fc.tuple(piece, recase, fc.constantFrom(...SEPARATORS)), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.map(([p, c, s]) => c(p) + s).join(''))
  .map((l) => l.replace(/\n/g, ' '));

/**
 * A built-in pattern loosened so that fast-check can generate from it (fc.stringMatching takes no
 * `i` flag, `\b` or lookaround): what it generates is a superset, kept only where the pattern matches.
 */
const loosened = (p: RegExp): RegExp =>
  new RegExp(p.source.replace(/\\b/g, '').replace(/\(\?[!=][^()]*(?:\([^()]*\)[^()]*)*\)/g, ''), p.flags.replace('i', ''));
/** Lines each built-in pattern matches, from the pattern itself, in any case. */
const patternLine: fc.Arbitrary<string> = fc.oneof(
  ...FAILURE_PATTERNS.map((p) =>
    fc.tuple(fc.stringMatching(loosened(p), { size: 'small' }), recase).map(([l, c]) => (p.flags.includes('i') ? c(l) : l)),
  ),
);

/** Every string anywhere in a value. */
function stringsIn(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, into);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) stringsIn(v, into);
  return into;
}

describe('FAILURE_WORDS: a line without them matches no built-in failure pattern', () => {
  /** Every line of `lines` a built-in pattern matches holds a gate word; at least `share` of them match one. */
  const gateHolds = (lines: fc.Arbitrary<string>, share: number): void => {
    let matched = 0;
    let total = 0;
    fc.assert(
      fc.property(lines, (l) => {
        total++;
        if (!matchesBuiltIn(l)) return;
        matched++;
        assert.ok(FAILURE_WORDS.test(l), `${matchesBuiltIn(l)} matches ${JSON.stringify(l)} but FAILURE_WORDS does not`);
      }),
      runs(40_000),
    );
    // The property is only as strong as the lines that match: most generated lines must be failures.
    assert.ok(matched > total * share, `only ${matched} of ${total} generated lines matched a pattern`);
  };

  test('generated lines', () => gateHolds(line, 1 / 4));

  test('lines generated from each built-in pattern', () => gateHolds(patternLine, 1 / 3));

  test('every line of the precision corpus, and of the helpers’ failure texts', () => {
    const lines = [...stringsIn(LEGIT), ...stringsIn(FAILURES)].flatMap((s) => s.split(/\r?\n|\r/));
    let matched = 0;
    for (const l of lines) {
      // Each line as a statement, and from its first non-blank character (statementOf trims).
      for (const candidate of [l, l.trim()]) {
        if (!matchesBuiltIn(candidate)) continue;
        matched++;
        assert.ok(FAILURE_WORDS.test(candidate), `${matchesBuiltIn(candidate)} matches ${JSON.stringify(candidate)}`);
      }
    }
    assert.ok(matched > 100, `only ${matched} corpus lines matched a pattern`);
  });

  test('a line of other words is not read by the built-in patterns (what the gate saves)', () => {
    assert.equal(FAILURE_WORDS.test('Paris: 18 C, light wind from the west, no rain expected today.'), false);
    assert.equal(FAILURE_WORDS.test('Upload failed.'), true);
  });
});

// ---------------------------------------------------------------------------------------------
// The engine's findings against each rule alone

/** The built-in patterns as new objects: the gate tries every one of them on every line. */
const UNGATED = FAILURE_PATTERNS.map((p) => new RegExp(p.source, p.flags));
const fast = new RuleEngine(rulesWith({ leaks: LEAK_PATTERNS, silentSuccess: FAILURE_PATTERNS, unknownTool: 'spec' }), (id, err) => {
  throw new Error(`${id} threw: ${String(err)}`);
});
const full = rulesWith({ leaks: LEAK_PATTERNS, silentSuccess: UNGATED, unknownTool: 'spec' });

const text = fc.oneof(line, leakyText, failureText, unicodeText(30));
const content = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: text.map((t) => ({ type: 'text', text: t })) },
    { weight: 1, arbitrary: fc.constant({ type: 'image', data: 'AA==', mimeType: 'image/png' }) },
  ),
  { maxLength: 3 },
);
const answer = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(content, fc.constantFrom(undefined, true, false, 'yes')) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: -32800, max: -31990 }), text) },
);
const tool = fc.constantFrom('get_weather', 'upload_file', 'run_code', 'validate_email', 'list_workflow_runs', 'nope');
const args = fc.dictionary(fc.constantFrom('city', 'query', 'code', 'path'), fc.oneof(text, fc.constantFrom('error', 'Paris')), {
  maxKeys: 2,
});

function exchangeOf(version: string, name: string, callArgs: Record<string, unknown>, given: unknown, listed: boolean): ExchangeSubject {
  const response = Array.isArray(given)
    ? Array.isArray(given[0])
      ? resultMsg(toolResult('', given[1] === undefined ? {} : { isError: given[1] }, version), 7)
      : errorMsg(given[0], given[1])
    : given;
  if (Array.isArray(given) && Array.isArray(given[0])) (response as { result: { content: unknown } }).result.content = given[0];
  return subject({
    version,
    tool: name,
    params: { name, arguments: callArgs },
    response,
    ...(listed ? { catalogue: ['get_weather', 'upload_file', 'run_code', 'validate_email', 'list_workflow_runs'] } : {}),
  });
}

const sortedIds = (findings: readonly Pick<Finding, 'rule' | 'message' | 'pointer'>[]): string[] =>
  findings.map((f) => `${f.rule} ${f.pointer} ${f.message}`).sort();

describe('the rules as the engine runs them find what each rule finds alone', () => {
  test('generated tools/call answers, every version', () => {
    let found = 0;
    const params = runs<[string, string, unknown, unknown, boolean]>(4_000);
    fc.assert(
      fc.property(fc.constantFrom(...ALL_VERSIONS), tool, args, answer, fc.boolean(), (version, name, callArgs, given, listed) => {
        const engine = sortedIds(fast.evaluate(exchangeOf(version, name, callArgs, given, listed), 'server'));
        const alone = full
          .filter(
            (r) =>
              r.subject === 'exchange' &&
              r.party === 'server' &&
              r.versions.includes(version) &&
              (r.transports?.includes('streamable-http') ?? true),
          )
          .flatMap((r) =>
            (r.check as (s: ExchangeSubject) => Omit<Finding, 'rule'>[])(exchangeOf(version, name, callArgs, given, listed)).map((f) => ({
              ...f,
              rule: r.id,
            })),
          );
        found += alone.length;
        assert.deepEqual(engine, sortedIds(alone));
      }),
      params,
    );
    // About one finding in four answers at least: the generators reach the rules.
    assert.ok(found > params.numRuns! / 4, `the generated answers drew only ${found} findings in ${params.numRuns} runs`);
  });
});
