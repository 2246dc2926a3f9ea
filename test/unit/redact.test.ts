// The redaction module (src/redact/, src/sinks/redact.ts): credential names, credential shapes,
// the bounded walker, and what log records, captures and reports make of arguments, targets and
// URLs. Each shape has positive cases and, as important, negative ones: ordinary text that must
// come out exactly as it went in.
import assert from 'node:assert/strict';
import { GROWTH, assertLinear } from '../helpers/growth.ts';
import { describe, test } from 'node:test';
import { isSecretName, isSecretQueryName } from '../../src/redact/names.ts';
import { REDACTED as TEXT_MARKER, redactText } from '../../src/redact/text.ts';
import { hideText, mapDeep, maskSecrets, maskShapes, REDACT_BOUNDS, TOO_DEEP, TOO_MANY, WALK } from '../../src/redact/values.ts';
import { REDACTED, redactTarget } from '../../src/sinks/logger.ts';
import { loggedArguments, loggedHeaders, redactUrl } from '../../src/sinks/redact.ts';

const params = {
  name: 'login',
  arguments: { user: 'ada', password: 'hunter2', nested: { api_key: 'k-1', count: 3, list: [{ access_token: 't' }] } },
};

test('one marker: the text redactor and the logger (pino censor) write the same', () => {
  assert.equal(TEXT_MARKER, REDACTED);
});

describe('credential names', () => {
  test('names that hold credentials, in every spelling', () => {
    for (const name of [
      'password',
      'passwd',
      'PGPASSWORD',
      'db.password',
      'pwd',
      'Pwd',
      'pass',
      'secret',
      'client_secret',
      'clientSecret',
      'AWS_SECRET_ACCESS_KEY',
      'token',
      'access_token',
      'accessToken',
      'id_token',
      'refresh_token',
      'auth_token',
      'private_token',
      'X-Auth-Token',
      'x-amz-security-token',
      'jwt',
      'api_key',
      'apiKey',
      'apikey',
      'x-api-key',
      'privateKey',
      'signature',
      'X-Amz-Signature',
      'sig',
      'X-Amz-Credential',
      'credentials',
      'authorization',
      'Proxy-Authorization',
      'cookie',
      'set-cookie',
      'auth',
      'basic_auth',
      'pin',
      'otp',
      'passphrase',
    ]) {
      assert.ok(isSecretName(name), name);
    }
  });

  test('names that merely contain a telling word keep their values', () => {
    for (const name of [
      'max_tokens',
      'tokens',
      'maxTokens',
      'tokenizer',
      'token_type',
      'progressToken',
      'nextPageToken',
      'NextToken',
      'pageToken',
      'author',
      'oauth',
      'authority',
      'sortKey',
      'publicKey',
      'key',
      'keys',
      'primary_key',
      'spin',
      'mapping',
      'passwordHint',
      'password_policy',
      'bypass',
      'compass',
      'session',
      'mcp-session-id',
      'sessionId',
      'code',
      'description',
      'design',
      'signed',
      'cursor',
      'id',
      'name',
      '',
    ]) {
      assert.ok(!isSecretName(name), name);
    }
  });

  test('a URL has a few more: ?key= (Google), ?code= (OAuth), ?sig= (Azure SAS)', () => {
    for (const name of ['key', 'code', 'sig', 'auth_token', 'private_token', 'X-Amz-Signature', 'jwt', 'pwd'])
      assert.ok(isSecretQueryName(name), name);
    for (const name of ['lang', 'state', 'page', 'q', 'redirect_uri', 'max_tokens']) assert.ok(!isSecretQueryName(name), name);
  });
});

describe('credential shapes in text', () => {
  const masked = (text: string, ...secrets: string[]): string => {
    const out = redactText(text);
    for (const s of secrets) assert.ok(!out.includes(s), `${s} still in ${out}`);
    assert.ok(out.includes(REDACTED), out);
    return out;
  };

  test('JWTs (JWS and JWE)', () => {
    const jws = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz';
    assert.equal(masked(`jwt ${jws} at 10:30`, jws), 'jwt [REDACTED] at 10:30');
    const jwe =
      'eyJhbGciOiJSU0EtT0FFUCJ9.OKOawDo13gRp2ojaHV7LFpZcgV7T6DVZ.48V1_ALb6US04U3b.5eym8TW_c8SuK0ltJ3rpYIzOeDQz7TALvtu6UG9oMo4vpzs9tX_EFShS8iB7j6ji.XFBoMYUZodetZdvTiFvSkQ';
    assert.equal(masked(jwe, 'OKOawDo13gRp', '48V1_ALb6US04U3b', 'XFBoMYUZodetZdvTiFvSkQ'), REDACTED);
  });

  test('scheme://user:password@ keeps the user and the host', () => {
    assert.equal(
      masked('pool error: postgres://app:PASSWORD@db-primary:5432/prod', 'PASSWORD'),
      'pool error: postgres://app:[REDACTED]@db-primary:5432/prod',
    );
    assert.equal(redactText('postgres://admin:p@ss@db:5432/x'), 'postgres://admin:[REDACTED]@db:5432/x');
    assert.equal(redactText('redis://:pw@cache:6379'), 'redis://:[REDACTED]@cache:6379');
    assert.equal(redactText('jdbc:oracle:thin:scott/tiger@//h:1521/svc'), 'jdbc:oracle:thin:scott/[REDACTED]@//h:1521/svc');
  });

  test('keys of well-known services, by prefix', () => {
    for (const key of [
      'AKIAIOSFODNN7EXAMPLE',
      'ASIAY34FZKBOKMUTVV7A',
      'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
      'gho_16C7e42F292c6912E7710c838347Ae178B4a',
      'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ',
      'xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
      'xoxp-1234567890-abcdefghij',
      'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t',
      'sk_live_51H8abcDEF1234567890xyz',
      'AIzaSyD-1234567890abcdefghijklmnopqrstu',
      'glpat-xxxxxxxxxxxxxxxxxxxx',
      'npm_abcdefghijklmnopqrstuvwxyz0123456789',
    ]) {
      assert.equal(masked(`key ${key}.`, key), 'key [REDACTED].', key);
    }
  });

  test('a key glued to a word by - or _ (#25): the key goes, the word stays; words that only look glued stay', () => {
    assert.equal(redactText('x-AKIAIOSFODNN7EXAMPLE'), 'x-[REDACTED]');
    assert.equal(redactText('tool x_sk-Ab1Cd2Ef3Gh4Ij5Kl6Mn7 failed'), 'tool x_[REDACTED] failed');
    assert.equal(redactText('cli-ghp_abcdefghijklmnopqrstuvwxyz0123456789'), 'cli-[REDACTED]');
    assert.equal(redactText('/srv/app-npm_abcdefghijklmnopqrstuvwxyz0123456789/x'), '/srv/app-[REDACTED]/x');
    for (const text of [
      'build-hf_cache_directory_path_for_models',
      'orders_pk_index_on_customer_and_date',
      'my-project-sk-learn-pipeline-step-two',
      'run-xox-checker-with-default-config',
      'user_pk_order_items_2024_archive',
    ])
      assert.equal(redactText(text), text, text);
  });

  test('Bearer and Basic credentials, not the words in prose', () => {
    assert.equal(masked('Authorization: Bearer abc.def-123', 'abc.def-123'), 'Authorization: Bearer [REDACTED]');
    assert.equal(masked('Basic dXNlcjpwYXNzd29yZA==', 'dXNlcjpw'), 'Basic [REDACTED]');
    assert.equal(masked('authorization: bearer sometoken', 'sometoken'), 'authorization: bearer [REDACTED]');
    for (const prose of ['HTTP Basic Authentication failed', 'the bearer of bad news', 'Bearer tokens expire', 'basic usage'])
      assert.equal(redactText(prose), prose);
    // A challenge names parameters, not credentials.
    for (const challenge of [
      'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"',
      'Bearer realm=example, error="invalid_token"',
      'Basic realm="api"',
    ]) {
      assert.equal(redactText(challenge), challenge);
    }
  });

  test('values of credential-named pairs: key=value, key: value, "key": "value", connection strings', () => {
    assert.equal(masked('password=hunter2&x=1', 'hunter2'), 'password=[REDACTED]&x=1');
    assert.equal(masked('Server=a;Pwd=x1;Password=y2', 'x1', 'y2'), 'Server=a;Pwd=[REDACTED];Password=[REDACTED]');
    assert.equal(masked('{"auth_token":"t1 t2","user":"ada"}', 't1', 't2'), '{"auth_token":"[REDACTED]","user":"ada"}');
    assert.equal(masked('X-Amz-Signature=abc123&X-Amz-Date=20250101', 'abc123'), 'X-Amz-Signature=[REDACTED]&X-Amz-Date=20250101');
    // A number is a count, except under a PIN's or a password's name.
    assert.equal(redactText('pass: 14, fail: 0, pin: 1234, password=5678'), 'pass: 14, fail: 0, pin: [REDACTED], password=[REDACTED]');
    assert.equal(masked("private_token: 'glx-short'", 'glx-short'), "private_token: '[REDACTED]'");
    // A JSON string inside a JSON string (escaped quotes).
    assert.equal(masked('{"detail":"{\\"password\\":\\"pw9\\"}"}', 'pw9'), '{"detail":"{\\"password\\":\\"[REDACTED]\\"}"}');
  });

  test('long random tokens, and hex that is not labelled a digest or an id', () => {
    masked('session k9Xp2LmQ7vR4tZ8nB3cY6wE1aS5dF0gHjK ok', 'k9Xp2LmQ7vR4tZ8nB3cY6wE1aS5dF0gHjK');
    masked('secret 3f786850e387550fdab836ed7e6dc881de23001b3f786850e387550f', '3f786850e387');
    // A UUID written without dashes is 128 bits of hex like any key: redacted (with dashes it stays, below).
    masked('dashless 550e8400e29b41d4a716446655440000', '550e8400e29b41d4a716446655440000');
  });

  test('ordinary text stays exactly as it is', () => {
    for (const text of [
      'nothing to hide: 42',
      'v1.2.3, 2025-11-25, node 20.18.1, semver ^1.32.2',
      'request 550e8400-e29b-41d4-a716-446655440000 and 3A1F4E2B-9C7D-4E8F-A1B2-C3D4E5F60718', // UUIDs
      'fixed in 3f78685, see a1b2c3d4e5f6 and 3f786850e3', // short commit SHAs (7-12)
      'commit 3f786850e387550fdab836ed7e6dc881de23001b', // a full SHA that says what it is
      'image@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      'x-request-id: 4bf92f3577b34da6a3ce929d0e0e4736, traceparent 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      'integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==',
      'ObjectId("507f1f77bcf86cd799439011")',
      '/home/user/Projects/App2024/src/components/UserProfile2FASettingsPanel.tsx',
      'C:\\Users\\JohnSmith\\AppData\\Roaming\\Code2024\\User\\settings.json',
      'uploads/2024/05/IMG_20240512_183045_HDR_Final_Version2.jpg',
      'https://example.com/docs/getting-started?lang=en#install', // a URL without userinfo
      'ssh://git@github.com/org/repo.git and https://github.com/org/repo/blob/3f786850e387550fdab836ed7e6dc881de23001b/src/x.ts',
      'a token is a piece of text; the token limit was hit; max_tokens=100; tokens: 5; token_type=bearer', // "token" in prose
      'progressToken: p-1, nextPageToken: abc, sortKey: name, author: Jane, monkey: banana, spin: 3',
      'AbstractSingletonProxyFactoryBean2Impl K8sClusterAutoscalerV2Beta1HorizontalPodAutoscaler getUserAccountSettingsForOrganization2024',
      'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdef',
      'Error: connect ECONNREFUSED 127.0.0.1:5432 at TCPConnectWrap.afterConnect (node:net:1555:16)',
      '{"has_password":true,"token":null,"password_required":false}',
      'task-queue-processing-worker-pool sk-learn pk_id',
      'x'.repeat(5000),
    ]) {
      assert.equal(redactText(text), text);
    }
  });

  test('a PEM private key goes whole, to its END line or to the end of the text', () => {
    assert.equal(
      redactText('key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nok'),
      'key:\n[REDACTED]\nok',
    );
    assert.equal(redactText('-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhk…'), REDACTED);
  });

  test('idempotent, and linear on hostile text', () => {
    const once = redactText('password=x1 postgres://a:b@h ghp_abcdefghijklmnopqrstuvwxyz0123456789');
    assert.equal(redactText(once), once);
    const hostile = (k: number): string[] => [
      'a:'.repeat(12_500 * k),
      'password='.repeat(5_000 * k),
      'postgres://'.repeat(5_000 * k),
      'eyJ'.repeat(12_500 * k),
      'A1b2'.repeat(12_500 * k),
      `${'a_'.repeat(12_500 * k)}=`,
      // Glue points every few characters, each where a key may start (#25's glued keys).
      `${'x-sk-aaaaaaaaaaaaaaaaaaaa-'.repeat(1_000 * k)}`,
      `${'x-AKIAIOSFODNN7EXAMPL-'.repeat(1_000 * k)}`,
    ];
    for (const [i, sample] of hostile(1).entries()) {
      const large = hostile(GROWTH)[i]!;
      assertLinear(`${sample.slice(0, 12)}…`, (scale) => () => redactText(scale === 1 ? sample : large));
    }
  });
});

describe('the walker', () => {
  test('copies with keys in order, never touching the original; __proto__ stays an own key', () => {
    const original = JSON.parse('{"b":1,"a":{"password":"pw","list":["x",{"__proto__":"p"}]}}') as Record<string, unknown>;
    const before = JSON.stringify(original);
    const copy = maskSecrets(original);
    assert.equal(JSON.stringify(original), before);
    assert.equal(JSON.stringify(copy), '{"b":1,"a":{"password":"[REDACTED]","list":["x",{"__proto__":"p"}]}}');
  });

  test('any depth: 40 levels are walked whole, and past the bound a subtree becomes a marker', () => {
    const nest = (levels: number, bottom: unknown): unknown => {
      let v = bottom;
      for (let i = 0; i < levels; i++) v = { level: v };
      return v;
    };
    const at40 = JSON.stringify(maskSecrets(nest(40, { password: 'cnry-40', dsn: 'postgres://u:cnry-dsn@h/db', note: 'kept' })));
    assert.ok(!at40.includes('cnry-40') && !at40.includes('cnry-dsn') && at40.includes('kept'), at40);
    const past = JSON.stringify(maskSecrets(nest(5000, { note: 'cnry-5000' })));
    assert.ok(!past.includes('cnry-5000'));
    assert.equal(past.split(TOO_DEEP).length, 2);
    assert.equal((past.match(/level/g) ?? []).length, REDACT_BOUNDS.depth);
  });

  test('past the node bound, every further value is a marker', () => {
    const out = mapDeep(['a', 'b', 'c', 'd'], () => WALK, { depth: 10, nodes: 3 }) as unknown[];
    assert.deepEqual(out, ['a', 'b', TOO_MANY, TOO_MANY]);
  });

  test("a number under a credential name goes only when it is a PIN or a password; a report's own keys are not judged by maskShapes", () => {
    assert.deepEqual(maskSecrets({ pass: 14, fail: 0, pin: 1234, password: 5678, pass_phrase: 'x' }), {
      pass: 14,
      fail: 0,
      pin: REDACTED,
      password: REDACTED,
      pass_phrase: REDACTED,
    });
    assert.deepEqual(maskShapes({ password: 'kept', dsn: 'postgres://a:b@h/d' }), { password: 'kept', dsn: 'postgres://a:[REDACTED]@h/d' });
  });

  test('hideText keeps shape and types, never text', () => {
    assert.deepEqual(hideText({ a: ['x', 1, true, null, { b: 'y', pin: 1234 }] }), {
      a: [REDACTED, 1, true, null, { b: REDACTED, pin: REDACTED }],
    });
  });
});

describe('what records make of arguments, targets and URLs', () => {
  test('redacted arguments keep their shape and types, never their text', () => {
    assert.deepEqual(loggedArguments(params, 'redacted'), {
      user: REDACTED,
      password: REDACTED,
      nested: { api_key: REDACTED, count: 3, list: [{ access_token: REDACTED }] },
    });
  });

  test('full arguments are as sent, except credentials: by name at any depth, and by shape', () => {
    assert.deepEqual(loggedArguments(params, 'full'), {
      user: 'ada',
      password: REDACTED,
      nested: { api_key: REDACTED, count: 3, list: [{ access_token: REDACTED }] },
    });
    assert.deepEqual(loggedArguments({ arguments: { Authorization: 'Bearer x', token: 'y', tokens: 2 } }, 'full'), {
      Authorization: REDACTED,
      token: REDACTED,
      tokens: 2,
    });
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz';
    assert.deepEqual(
      loggedArguments(
        {
          arguments: { query: 'weather in Paris', session: jwt, dsn: 'postgres://app:pw@db/x', id: '550e8400-e29b-41d4-a716-446655440000' },
        },
        'full',
      ),
      {
        query: 'weather in Paris',
        session: REDACTED,
        dsn: 'postgres://app:[REDACTED]@db/x',
        id: '550e8400-e29b-41d4-a716-446655440000',
      },
    );
  });

  test('arguments off, or a request without arguments, log nothing', () => {
    assert.equal(loggedArguments(params, 'off'), undefined);
    assert.equal(loggedArguments({ name: 'x' }, 'full'), undefined);
    assert.equal(loggedArguments(undefined, 'redacted'), undefined);
  });

  test('Mcp-Param-* headers are tool arguments: hidden, or minus credentials when arguments are logged in full', () => {
    const headers = {
      'mcp-method': 'tools/call',
      'mcp-name': 'lookup',
      'mcp-param-region': 'eu-west',
      'mcp-param-dsn': 'postgres://a:pw@h/d',
      'mcp-session-id': 's-1',
    };
    assert.deepEqual(loggedHeaders(headers), { ...headers, 'mcp-param-region': REDACTED, 'mcp-param-dsn': REDACTED });
    assert.deepEqual(loggedHeaders(headers, 'full'), { ...headers, 'mcp-param-dsn': `postgres://a:${REDACTED}@h/d` });
    assert.equal(loggedHeaders({ 'mcp-name': 'file:///x?token=t1' })['mcp-name'], `file:///x?token=${REDACTED}`);
  });

  test('query values named like secrets, or shaped like them, are redacted in a logged target', () => {
    assert.equal(redactTarget('/mcp?access_token=abc&lang=en'), `/mcp?access_token=${REDACTED}&lang=en`);
    assert.equal(redactTarget('/mcp'), '/mcp');
    assert.equal(
      redactTarget('/x?auth_token=a1&private_token=a2&X-Amz-Signature=a3&jwt=a4&pwd=a5&key=a6&code=a7&sig=a8&page=2'),
      `/x?auth_token=${REDACTED}&private_token=${REDACTED}&X-Amz-Signature=${REDACTED}&jwt=${REDACTED}&pwd=${REDACTED}&key=${REDACTED}&code=${REDACTED}&sig=${REDACTED}&page=2`,
    );
    // Encoded names, and values that are credentials whatever their name.
    assert.equal(
      redactTarget('/x?access%5Ftoken=a1&t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl&u=postgres%3A%2F%2Fa%3Ab%40h'),
      `/x?access%5Ftoken=${REDACTED}&t=${REDACTED}&u=${REDACTED}`,
    );
    // A credential in the path, and a fragment (OAuth's implicit flow).
    assert.equal(redactTarget('/hooks/ghp_abcdefghijklmnopqrstuvwxyz0123456789/run'), `/hooks/${REDACTED}/run`);
    assert.equal(redactTarget('/cb#access_token=a1&state=s'), `/cb#access_token=${REDACTED}&state=s`);
    // A legacy SSE session's id in a query is its bearer credential: who has it can post into the session.
    assert.equal(redactTarget('/messages?sessionId=0f9a8b7c-1111&x=1'), `/messages?sessionId=${REDACTED}&x=1`);
    assert.equal(redactTarget('/messages?session_id=abc'), `/messages?session_id=${REDACTED}`);
    // What is no credential stays.
    for (const target of [
      '/.well-known/oauth-protected-resource/mcp',
      '/mcp?lang=en&page=2&q=a+b',
      '/oauth/callback?state=s1&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb',
    ])
      assert.equal(redactTarget(target), target);
  });

  test('redactUrl: userinfo password (or a lone username, a token then) and query credentials', () => {
    assert.equal(
      redactUrl(new URL('http://app:s3cret@127.0.0.1:9/mcp?api_key=k&x=1')),
      `http://app:${REDACTED}@127.0.0.1:9/mcp?api_key=${REDACTED}&x=1`,
    );
    assert.equal(redactUrl('https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x'), `https://${REDACTED}@github.com/x`);
    assert.equal(
      redactUrl('https://x-access-token:t0k3n@github.com/org/repo.git'),
      `https://x-access-token:${REDACTED}@github.com/org/repo.git`,
    );
    assert.equal(redactUrl(new URL('http://127.0.0.1:3000/mcp')), 'http://127.0.0.1:3000/mcp');
    assert.equal(redactUrl('postgres://app:pw@db:5432/prod'), `postgres://app:${REDACTED}@db:5432/prod`);
    assert.equal(redactUrl('not a url, password=pw'), `not a url, password=${REDACTED}`);
  });
});
