// deploy/kubernetes/: the manifests parse, and what they name exists: the proxy's flags and
// environment variables, the policy file, the ports its --listen and --admin give (probes and
// Service on them, probes on paths the admin port serves), the Redis Service MCP_WARDEN_STATE
// names and its port, resource limits on every container. Pure: files are read, nothing is started.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { buildProgram } from '../../src/cli-program.ts';
import { parsePeerAddress } from '../../src/config/cli-options.ts';
import { parseState } from '../../src/state/state-url.ts';

const ROOT = new URL('../../', import.meta.url);
const DIR = new URL('deploy/kubernetes/', ROOT);

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML of any shape; the assertions check each field they read
type Rec = Record<string, any>;

const manifests: Rec[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) =>
    parseAllDocuments(readFileSync(new URL(f, DIR), 'utf8')).map((doc) => {
      assert.deepEqual(doc.errors, [], f);
      return doc.toJS() as Rec;
    }),
  );
const byKind = (kind: string, name: string): Rec => {
  const found = manifests.find((m) => m.kind === kind && m.metadata?.name === name);
  assert.ok(found, `${kind} ${name}`);
  return found;
};
const container = (deployment: Rec): Rec => deployment.spec.template.spec.containers[0];
/** A container port by its name or number. */
const portOf = (c: Rec, ref: string | number): number => {
  const port = c.ports.find((p: Rec) => p.name === ref || p.containerPort === ref);
  assert.ok(port, `port ${ref} of ${c.name}`);
  return port.containerPort;
};

test('the manifests parse: a Deployment and a Service for the proxy and for Redis', () => {
  assert.deepEqual(manifests.map((m) => `${m.kind} ${m.metadata.name}`).sort(), [
    'Deployment mcp-warden',
    'Deployment mcp-warden-redis',
    'NetworkPolicy mcp-warden-peers',
    'Service mcp-warden',
    'Service mcp-warden-redis',
  ]);
});

test("the proxy's arguments and environment are options it has; ports, probes and Services agree", () => {
  const proxy = buildProgram().commands.find((c) => c.name() === 'proxy')!;
  const deployment = byKind('Deployment', 'mcp-warden');
  assert.ok(deployment.spec.replicas > 1, 'a fleet');
  const c = container(deployment);
  const [command, ...rest] = c.args as string[];
  assert.equal(command, 'proxy');
  const flags = new Map<string, string>();
  for (let i = 0; i < rest.length; i += 2) flags.set(rest[i]!, rest[i + 1]!);
  for (const flag of flags.keys())
    assert.ok(
      proxy.options.some((o) => o.long === flag),
      `${flag} is an option of proxy`,
    );
  const envs = new Set(proxy.options.map((o) => o.envVar));
  const env = c.env as Rec[];
  // A variable the proxy does not read is there for another's value ($(NAME), Kubernetes' dependent variables).
  const referenced = (name: string) => env.some((e) => typeof e.value === 'string' && e.value.includes(`$(${name})`));
  for (const e of env) assert.ok(envs.has(e.name) || referenced(e.name), `${e.name} is read by proxy`);
  assert.ok(existsSync(new URL(flags.get('--policy')!, ROOT)), 'the policy is one the image holds (config/)');

  const listen = Number(flags.get('--listen')!.split(':').at(-1));
  const admin = Number(flags.get('--admin')!.split(':').at(-1));
  assert.equal(portOf(c, 'mcp'), listen);
  assert.equal(portOf(c, 'admin'), admin);
  const admitted = readFileSync(new URL('src/proxy/admin.ts', ROOT), 'utf8');
  for (const probe of [c.livenessProbe, c.readinessProbe]) {
    assert.equal(portOf(c, probe.httpGet.port), admin, 'probes on the admin port');
    assert.ok(admitted.includes(`'${probe.httpGet.path}'`), `${probe.httpGet.path} is served by the admin port`);
  }
  for (const p of byKind('Service', 'mcp-warden').spec.ports) portOf(c, p.targetPort);

  // The peer address: the pod's own IP (the downward API), on the port named peer.
  const peer = env.find((e) => e.name === 'MCP_WARDEN_PEER_ADDRESS')!.value as string;
  assert.equal(env.find((e) => e.name === 'POD_IP')?.valueFrom?.fieldRef?.fieldPath, 'status.podIP');
  const peerAt = parsePeerAddress(peer.replace('$(POD_IP)', '10.0.3.7'));
  assert.equal(peerAt.host, '10.0.3.7');
  assert.equal(parsePeerAddress(peer.replace('$(POD_IP)', 'fd00::7')).host, 'fd00::7', 'an IPv6 pod address parses too');
  assert.equal(portOf(c, 'peer'), peerAt.port);
  // Only the replicas reach the peer port; the MCP and admin ports stay open.
  const policy = byKind('NetworkPolicy', 'mcp-warden-peers');
  assert.deepEqual(policy.spec.podSelector.matchLabels, deployment.spec.selector.matchLabels);
  const rules = policy.spec.ingress as Rec[];
  const peerRule = rules.find((r) => r.ports.some((p: Rec) => p.port === peerAt.port))!;
  assert.deepEqual(peerRule.ports, [{ port: peerAt.port }], 'the peer port on a rule of its own');
  assert.deepEqual(peerRule.from, [{ podSelector: { matchLabels: deployment.spec.selector.matchLabels } }]);
  const open = rules.filter((r) => r.from === undefined).flatMap((r) => r.ports.map((p: Rec) => p.port));
  assert.deepEqual(open.sort(), [admin, listen].sort(), 'the MCP and admin ports open to the cluster');

  // MCP_WARDEN_STATE names the Redis Service, on its port.
  const state = parseState((c.env as Rec[]).find((e) => e.name === 'MCP_WARDEN_STATE')!.value);
  assert.equal(state.kind, 'redis');
  const url = (state as { url: URL }).url;
  const service = byKind('Service', url.hostname);
  const port = service.spec.ports.find((p: Rec) => p.port === Number(url.port));
  assert.ok(port, `the Redis Service serves port ${url.port}`);
  assert.equal(portOf(container(byKind('Deployment', 'mcp-warden-redis')), port.targetPort), 6379);
});

test('every container has resource requests and limits', () => {
  for (const d of manifests.filter((m) => m.kind === 'Deployment')) {
    const { resources } = container(d);
    assert.ok(resources?.requests?.memory && resources?.limits?.memory && resources?.limits?.cpu, d.metadata.name);
  }
});
