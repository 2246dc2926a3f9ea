// The versions table's facts, pinned (issue 12): every per-version difference lives in
// src/mcp/versions.ts, so a wrong cell there is wrong everywhere. Each assertion is one column read
// across the versions, and a few check that the modules reading a column follow it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { declarable, isUnknownMethod, methodsOf } from '../../src/mcp/methods.ts';
import { judgingInfo, LATEST_OF, LATEST_VERSION, VERSIONS, type VersionInfo } from '../../src/mcp/versions.ts';
import { definedIn, isDefinedFor } from '../../src/rules/code-ranges.ts';
import { validateArguments } from '../../src/rules/tool-arguments.ts';
import { TOOL_SHAPE_RULES } from '../../src/rules/tool-shapes.ts';
import { ALL, LEGACY, MODERN, where } from '../../src/rules/versions.ts';
import { subject } from '../helpers/subject.ts';

/** One column across the versions, oldest first. */
const column = <K extends keyof VersionInfo>(key: K): Record<string, VersionInfo[K]> =>
  Object.fromEntries(VERSIONS.map((v) => [v.version, v[key]]));
const versionsWith = (fact: (v: VersionInfo) => boolean): string[] => VERSIONS.filter(fact).map((v) => v.version);

describe('the versions table', () => {
  test('five versions, oldest first (the newest of an era is its last row), one of them modern', () => {
    assert.deepEqual(ALL, ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28']);
    assert.deepEqual([...ALL].sort(), ALL);
    assert.deepEqual(column('era'), {
      '2024-11-05': 'legacy',
      '2025-03-26': 'legacy',
      '2025-06-18': 'legacy',
      '2025-11-25': 'legacy',
      '2026-07-28': 'modern',
    });
    assert.deepEqual([LEGACY, MODERN], [['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'], ['2026-07-28']]);
    assert.deepEqual([LATEST_OF, LATEST_VERSION], [{ legacy: '2025-11-25', modern: '2026-07-28' }, '2026-07-28']);
  });

  test('every row has the same columns, and no column is the same in every version', () => {
    const keys = Object.keys(VERSIONS[0]!).sort();
    for (const row of VERSIONS) assert.deepEqual(Object.keys(row).sort(), keys, row.version);
    for (const key of keys) {
      if (key === 'version') continue;
      const cells = new Set(
        VERSIONS.map((v) => JSON.stringify(v[key as keyof VersionInfo], (_k, x: unknown) => (x instanceof Set ? [...x] : x))),
      );
      assert.ok(cells.size > 1, `${key} does not differ by version`);
    }
  });

  test('transport: HTTP+SSE in 2024-11-05, Streamable HTTP after; batches only in 2025-03-26; sessions in the legacy Streamable HTTP versions', () => {
    assert.deepEqual(
      versionsWith((v) => !v.streamableHttp),
      ['2024-11-05'],
    );
    assert.deepEqual(
      versionsWith((v) => v.batching),
      ['2025-03-26'],
    );
    assert.deepEqual(
      versionsWith((v) => v.sessions),
      ['2025-03-26', '2025-06-18', '2025-11-25'],
    );
    assert.deepEqual(
      versionsWith((v) => v.versionHeaderAfterInit),
      ['2025-06-18', '2025-11-25'],
    );
    assert.deepEqual(
      where((v) => v.versionHeaderAfterInit),
      versionsWith((v) => v.versionHeaderAfterInit),
    );
  });

  test('from 2025-11-25: an id-less error, 403 for a foreign Origin, input errors as isError results, JSON Schema 2020-12', () => {
    const newer = ['2025-11-25', '2026-07-28'];
    assert.deepEqual(
      versionsWith((v) => v.errorIdOptional),
      newer,
    );
    assert.deepEqual(
      versionsWith((v) => v.foreignOrigin403),
      newer,
    );
    assert.deepEqual(
      versionsWith((v) => v.inputErrorsAreToolErrors),
      newer,
    );
    assert.deepEqual(column('schemaDialect'), {
      '2024-11-05': 'draft-07',
      '2025-03-26': 'draft-07',
      '2025-06-18': 'draft-07',
      '2025-11-25': '2020-12',
      '2026-07-28': '2020-12',
    });
  });

  test('tool results: audio from 2025-03-26; resource_link, outputSchema and structuredContent from 2025-06-18', () => {
    assert.deepEqual(
      versionsWith((v) => v.structuredOutput),
      ['2025-06-18', '2025-11-25', '2026-07-28'],
    );
    assert.deepEqual(column('contentTypes'), {
      '2024-11-05': ['text', 'image', 'resource'],
      '2025-03-26': ['text', 'image', 'resource', 'audio'],
      '2025-06-18': ['text', 'image', 'resource', 'audio', 'resource_link'],
      '2025-11-25': ['text', 'image', 'resource', 'audio', 'resource_link'],
      '2026-07-28': ['text', 'image', 'resource', 'audio', 'resource_link'],
    });
  });

  test('methods: tasks/* only in 2025-11-25; 2026-07-28 has server/discover and subscriptions/listen, no initialize, ping, logging or subscribe', () => {
    const legacy = methodsOf('2024-11-05')!;
    assert.deepEqual([...methodsOf('2025-03-26')!], [...legacy]);
    assert.deepEqual([...methodsOf('2025-06-18')!], [...legacy]);
    assert.deepEqual(
      [...methodsOf('2025-11-25')!].filter((m) => !legacy.has(m)),
      ['tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/list'],
    );
    const modern = methodsOf('2026-07-28')!;
    assert.deepEqual(
      [...modern].filter((m) => !legacy.has(m)),
      ['server/discover', 'subscriptions/listen'],
    );
    assert.deepEqual(
      [...legacy].filter((m) => !modern.has(m)),
      ['initialize', 'ping', 'resources/subscribe', 'resources/unsubscribe', 'logging/setLevel'],
    );
  });

  test('completions: a capability 2024-11-05 has none of, so a server there cannot be faulted for not declaring it', () => {
    assert.deepEqual(
      versionsWith((v) => !v.completionsCapability),
      ['2024-11-05'],
    );
    assert.equal(declarable('completions', '2024-11-05'), false);
    assert.equal(declarable('tools', '2024-11-05'), true);
    assert.equal(declarable('completions', '2099-01-01'), true);
    assert.equal(isUnknownMethod('completion/complete', '2024-11-05', { tools: {} }), false);
    assert.equal(isUnknownMethod('completion/complete', '2025-03-26', { tools: {} }), true);
  });

  test('codes: -32002 through 2025-11-25, -32042 only in 2025-11-25, -32020..-32022 from 2026-07-28', () => {
    assert.deepEqual(column('codes'), {
      '2024-11-05': [-32002],
      '2025-03-26': [-32002],
      '2025-06-18': [-32002],
      '2025-11-25': [-32002, -32042],
      '2026-07-28': [-32020, -32021, -32022],
    });
    assert.deepEqual(
      [definedIn(-32002), definedIn(-32042), definedIn(-32022), definedIn(-32601), definedIn(-32001)],
      ['2024-11-05..2025-11-25', '2025-11-25', '2026-07-28', '2024-11-05..2026-07-28', 'no version'],
    );
    assert.equal(isDefinedFor(-32002, '2026-07-28'), false);
    assert.equal(isDefinedFor(-32021, '2026-07-28'), true);
  });

  test('a version nobody defined takes the facts of the newest version of the era it was sent in', () => {
    assert.equal(judgingInfo('2099-01-01', 'legacy').version, '2025-11-25');
    assert.equal(judgingInfo('2024-01-01', 'modern').version, '2026-07-28');
    assert.equal(judgingInfo('constructor', 'legacy').version, '2025-11-25');
    assert.equal(judgingInfo('2025-03-26', 'modern').version, '2025-03-26');
  });
});

describe('modules that read the table follow it', () => {
  test("tool-arguments: a schema without $schema is read in its version's dialect (prefixItems is 2020-12 only)", () => {
    const schema = { type: 'object', properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }] } } };
    const args = { pair: [1] };
    assert.equal(validateArguments(schema, args, '2025-06-18')?.valid, true);
    assert.equal(validateArguments(schema, args, '2025-11-25')?.valid, false);
    assert.equal(validateArguments(schema, args, '2099-01-01'), undefined);
  });

  test("tool-shapes: a content block is held to its version's types (an unknown version to all of them)", () => {
    const shape = TOOL_SHAPE_RULES.find((r) => r.id === 'tool-result-shape')!;
    const audio = { content: [{ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }] };
    const judged = (version: string) => shape.check(subject({ version, response: { jsonrpc: '2.0', id: 7, result: audio } })).length;
    assert.deepEqual(['2024-11-05', '2025-03-26', '2099-01-01'].map(judged), [1, 0, 0]);
  });
});
