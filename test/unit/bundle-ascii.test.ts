// The CLI's test bundle is made ASCII (test/helpers/bundle.ts asciiOnly()) so that node reads it
// as Latin-1; what esbuild leaves non-ASCII is in regular expression literals, where an escape must
// match what the character matched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asciiOnly } from '../helpers/bundle.ts';

/** The value of a JavaScript expression given as source text. */
const evaluate = (source: string): unknown => new Function(`return (${source});`)();

const SAMPLES: Array<[regex: string, inputs: string[]]> = [
  ['/^(?:erreur|błąd|ошибка|错误|エラー)[ \\t]*[:：!]/i', ['Błąd: x', 'ОШИБКА: y', '错误：z', 'error: no', 'エラー!']],
  ['/désolé\\b/u', ['Désolé, non', 'desole']],
  ['/[😀-😂]/u', ['😁', '\ud83d', 'x']],
  ['/😀+/', ['😀😀', '\ude00']],
  ['/\\é/', ['é', '\\é']],
  ['/\\\\é/', ['\\é', 'é']],
];

test('asciiOnly: every non-ASCII character goes, and each regular expression matches as before', () => {
  for (const [source, inputs] of SAMPLES) {
    const escaped = asciiOnly(source);
    assert.match(escaped, /^[\x20-\x7e]*$/, `${source} → ${escaped}`);
    const before = evaluate(source) as RegExp;
    const after = evaluate(escaped) as RegExp;
    assert.equal(after.flags, before.flags);
    for (const input of inputs) assert.equal(after.test(input), before.test(input), `${source} on ${JSON.stringify(input)}`);
  }
});

test('asciiOnly: ASCII is left as it is', () => {
  const code = String.raw`var a = /\\x/g, b = "\u00e9"; // é in a comment`.replace('é', 'e');
  assert.equal(asciiOnly(code), code);
});
