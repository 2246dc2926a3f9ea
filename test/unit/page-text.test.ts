// pageText: an error page as a person reads it, for the leak rules: markup and scripts dropped,
// the common entities decoded, credentials masked, bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pageText } from '../../src/rules/subjects.ts';

test('markup, scripts and styles dropped; entities decoded; spacing collapsed', () => {
  const html =
    '<html><head><style>body{color:red}</style><script>var x = 1;</script></head><body><pre>Error: boom<br> &nbsp; &nbsp;at f (/srv/a.js:1:2) &lt;x&gt; &amp; &#39;q&#39;</pre></body></html>';
  assert.equal(pageText(html), "Error: boom at f (/srv/a.js:1:2) <x> & 'q'");
});

test('a credential on the page is masked; the text is bounded', () => {
  assert.doesNotMatch(pageText('<p>Authorization: Bearer sk-live-abcdefghijklmnopqrstuvwxyz0123456789</p>'), /sk-live-abcdefghijklmnop/);
  assert.ok(pageText(`<p>${'word '.repeat(10_000)}</p>`).length <= 4001);
  assert.equal(pageText(Buffer.from('<b>plain</b> text')), 'plain text');
});
