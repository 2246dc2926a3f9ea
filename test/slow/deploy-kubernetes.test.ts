// deploy/kubernetes/: each overlay as `kubectl apply -k` renders it (kubectl kustomize) validates
// against the schemas of its kinds, passes the restricted Pod Security profile, names no `:latest`,
// and names what exists: the proxy's flags and variables, the policy file, the ports its --listen and
// --admin give (probes, Services, the ServiceMonitor on them). The fleet keeps Redis behind a
// password from a Secret and a NetworkPolicy; every overlay keeps the admin port to the monitoring
// namespace. The checks that guard those return problems, and each is shown to find the one it
// guards against once it is taken out of the rendered overlay. In the slow tier: it needs kubectl
// (on the machines' image; without it these tests fail, they never skip). Nothing is started.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { buildProgram } from '../../src/cli-program.ts';
import { parsePeerAddress } from '../../src/config/cli-options.ts';
import { parse } from 'yaml';
import { parseState } from '../../src/state/state-url.ts';
import { type Manifest, kustomize, schemaError } from '../helpers/kustomize.ts';
import { admitted } from '../helpers/network-policy.ts';
import { ALERTS, PROMETHEUS_RULE, prometheusRule } from '../helpers/prometheus-rule.ts';
import { restrictedProblems } from '../helpers/pod-security.ts';

const ROOT = new URL('../../', import.meta.url);
const OVERLAYS = new URL('deploy/kubernetes/overlays/', ROOT);
const { version } = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version: string };
const MONITORING = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }];

const find = (objects: Manifest[], kind: string, name: string): Manifest | undefined =>
  objects.find((o) => o.kind === kind && o.metadata?.name === name);
const get = (objects: Manifest[], kind: string, name: string): Manifest => {
  const found = find(objects, kind, name);
  assert.ok(found, `${kind} ${name}`);
  return found;
};
const podsOf = (objects: Manifest[]): Manifest[] => objects.filter((o) => o.kind === 'Deployment');
const containerOf = (deployment: Manifest, name: string): Manifest | undefined =>
  deployment.spec.template.spec.containers.find((c: Manifest) => c.name === name);
/** A container port by its name or number. */
const portOf = (c: Manifest, ref: string | number): Manifest => {
  const port = c.ports.find((p: Manifest) => p.name === ref || p.containerPort === ref);
  assert.ok(port, `port ${ref} of ${c.name}`);
  return port;
};
/** The proxy's flags from its args (`proxy --flag value ...`). */
const flagsOf = (c: Manifest): Map<string, string> => {
  const [command, ...rest] = c.args as string[];
  assert.equal(command, 'proxy');
  const flags = new Map<string, string>();
  for (let i = 0; i < rest.length; i += 2) flags.set(rest[i]!, rest[i + 1]!);
  return flags;
};
/** The env variable a `$(NAME)` reference names, with the Secret key it comes from, if any. */
const secretBehind = (env: Manifest[], reference: string | undefined): string | undefined => {
  const name = /^\$\((\w+)\)$/.exec(reference ?? '')?.[1];
  const ref = env.find((e) => e.name === name)?.valueFrom?.secretKeyRef;
  return ref ? `${ref.name}/${ref.key}` : undefined;
};
/** Whether two lists of NetworkPolicy peers (or 'anyone') are the same. */
const samePeers = (a: Manifest[] | 'anyone', b: Manifest[]): boolean => JSON.stringify(a) === JSON.stringify(b);

/** What the proxy's pods must keep in every overlay: who reaches its admin and MCP ports. */
function proxyNetworkProblems(objects: Manifest[]): string[] {
  const pod = get(objects, 'Deployment', 'mcp-warden').spec.template;
  const proxy = containerOf(get(objects, 'Deployment', 'mcp-warden'), 'mcp-warden')!;
  const problems: string[] = [];
  if (!samePeers(admitted(objects, pod.metadata.labels, portOf(proxy, 'admin')), MONITORING))
    problems.push('the admin port is open beyond the monitoring namespace');
  if (admitted(objects, pod.metadata.labels, portOf(proxy, 'mcp')) !== 'anyone') problems.push('the MCP port is closed to clients');
  // A port of another container of the pod (the sidecar's MCP server) is reached through the proxy only.
  for (const c of pod.spec.containers.filter((c: Manifest) => c !== proxy))
    for (const p of c.ports ?? []) {
      const who = admitted(objects, pod.metadata.labels, p);
      if (who === 'anyone' || who.length > 0) problems.push(`${c.name}'s port ${p.name} is reachable`);
    }
  return problems;
}

/** What a fleet must keep: Redis asks for the password the replicas' state URL carries, and only the replicas reach Redis and the peer port. */
function fleetProblems(objects: Manifest[]): string[] {
  const problems: string[] = [];
  const deployment = get(objects, 'Deployment', 'mcp-warden');
  const proxyLabels = deployment.spec.template.metadata.labels;
  const proxy = containerOf(deployment, 'mcp-warden')!;
  const replicasOnly = [{ podSelector: { matchLabels: proxyLabels } }];
  const redisDeployment = get(objects, 'Deployment', 'mcp-warden-redis');
  const redis = containerOf(redisDeployment, 'redis')!;
  const args = redis.args as string[];
  const required = secretBehind(redis.env ?? [], args[args.indexOf('--requirepass') + 1]);
  if (!args.includes('--requirepass') || required === undefined) problems.push('Redis asks for no password from a Secret');
  const state = parseState(proxy.env.find((e: Manifest) => e.name === 'MCP_WARDEN_STATE')?.value ?? 'memory');
  if (state.kind !== 'redis') problems.push('the replicas share no state');
  else {
    if (secretBehind(proxy.env, decodeURIComponent(state.url.password)) !== required || required === undefined)
      problems.push("MCP_WARDEN_STATE carries no password, or not Redis' one");
    const service = find(objects, 'Service', state.url.hostname);
    const served = service?.spec.ports.find((p: Manifest) => p.port === Number(state.url.port));
    if (!served || portOf(redis, served.targetPort).containerPort !== 6379) problems.push('MCP_WARDEN_STATE names no Redis Service port');
  }
  if (!samePeers(admitted(objects, redisDeployment.spec.template.metadata.labels, portOf(redis, 6379)), replicasOnly))
    problems.push('Redis is reachable by others than the replicas');
  if (!samePeers(admitted(objects, proxyLabels, portOf(proxy, 'peer')), replicasOnly))
    problems.push('the peer port is reachable by others than the replicas');
  return problems;
}

for (const overlay of readdirSync(OVERLAYS)) {
  describe(`overlay ${overlay}`, () => {
    const objects = kustomize(new URL(overlay, OVERLAYS).pathname);

    test('every object validates against the schema of its kind', async () => {
      for (const o of objects) assert.equal(await schemaError(o), undefined, `${o.kind} ${o.metadata.name}`);
      const kinds = new Set(objects.map((o) => o.kind));
      for (const kind of ['Deployment', 'Service', 'ConfigMap', 'PodDisruptionBudget', 'NetworkPolicy', 'ServiceMonitor'])
        assert.ok(kinds.has(kind), kind);
    });

    test('every pod passes the restricted Pod Security profile, with a read-only root and resource limits', () => {
      for (const d of podsOf(objects)) assert.deepEqual(restrictedProblems(d.spec.template.spec), [], d.metadata.name);
      const loosened = structuredClone(get(objects, 'Deployment', 'mcp-warden').spec.template.spec);
      delete loosened.securityContext.seccompProfile;
      loosened.containers[0].securityContext.allowPrivilegeEscalation = true;
      const found = restrictedProblems(loosened).join('\n');
      assert.match(found, /seccompProfile is not RuntimeDefault/);
      assert.match(found, /allowPrivilegeEscalation is not false/);
    });

    test('every image has a tag or a digest, never latest; the proxy runs this version', () => {
      for (const d of podsOf(objects))
        for (const c of d.spec.template.spec.containers) {
          assert.match(c.image, /(:[\w.-]+|@sha256:[0-9a-f]{64})$/, c.image);
          assert.doesNotMatch(c.image, /:latest$/, c.image);
        }
      assert.match(
        containerOf(get(objects, 'Deployment', 'mcp-warden'), 'mcp-warden')!.image,
        new RegExp(`:${version.replaceAll('.', '\\.')}$`),
      );
      assert.equal(
        objects.some((o) => o.kind === 'Secret'),
        false,
        'no Secret ships: its values are generated or given by the user',
      );
    });

    test("the proxy's arguments and environment are options it has; ports, probes, Services and the ServiceMonitor agree", () => {
      const proxyCommand = buildProgram().commands.find((c) => c.name() === 'proxy')!;
      const deployment = get(objects, 'Deployment', 'mcp-warden');
      assert.ok(deployment.spec.replicas > 1, 'replicas');
      const c = containerOf(deployment, 'mcp-warden')!;
      const flags = flagsOf(c);
      for (const flag of flags.keys())
        assert.ok(
          proxyCommand.options.some((o) => o.long === flag),
          `${flag} is an option of proxy`,
        );
      const settings = c.envFrom.flatMap((ref: Manifest) => Object.entries(get(objects, 'ConfigMap', ref.configMapRef.name).data));
      const env: Manifest[] = [...c.env, ...settings.map(([name, value]: [string, string]) => ({ name, value }))];
      const envs = new Set(proxyCommand.options.map((o) => o.envVar));
      // A variable the proxy does not read is there for another's value ($(NAME), Kubernetes' dependent variables).
      const referenced = (name: string) => env.some((e) => typeof e.value === 'string' && e.value.includes(`$(${name})`));
      for (const e of env) assert.ok(envs.has(e.name) || referenced(e.name), `${e.name} is read by proxy`);
      const policy = env.find((e) => e.name === 'MCP_WARDEN_POLICY')!.value as string;
      assert.ok(existsSync(new URL(policy, ROOT)), 'the policy is one the image holds (config/)');
      assert.ok(new URL(env.find((e) => e.name === 'MCP_WARDEN_UPSTREAM')!.value), 'an upstream URL');

      const listen = Number(flags.get('--listen')!.split(':').at(-1));
      const admin = Number(flags.get('--admin')!.split(':').at(-1));
      assert.equal(portOf(c, 'mcp').containerPort, listen);
      assert.equal(portOf(c, 'admin').containerPort, admin);
      const served = readFileSync(new URL('src/proxy/admin.ts', ROOT), 'utf8');
      for (const probe of [c.livenessProbe, c.readinessProbe]) {
        assert.equal(portOf(c, probe.httpGet.port).containerPort, admin, 'probes on the admin port');
        assert.ok(served.includes(`'${probe.httpGet.path}'`), `${probe.httpGet.path} is served by the admin port`);
      }
      assert.deepEqual([c.livenessProbe.httpGet.path, c.readinessProbe.httpGet.path], ['/healthz', '/readyz']);
      const service = get(objects, 'Service', 'mcp-warden');
      for (const p of service.spec.ports) portOf(c, p.targetPort);
      const monitor = get(objects, 'ServiceMonitor', 'mcp-warden');
      for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels))
        assert.equal(service.metadata.labels[k], v, 'the ServiceMonitor selects the Service');
      const scraped = service.spec.ports.find((p: Manifest) => p.name === monitor.spec.endpoints[0].port);
      assert.equal(portOf(c, scraped.targetPort).containerPort, admin, 'the ServiceMonitor scrapes the admin port');
      assert.equal(monitor.spec.endpoints[0].path, '/metrics');
    });

    test('rollouts and drains keep replicas serving: a drain delay, grace period, a PDB, spread across nodes', () => {
      const deployment = get(objects, 'Deployment', 'mcp-warden');
      const pod = deployment.spec.template;
      const c = containerOf(deployment, 'mcp-warden')!;
      const seconds = (name: string): number => Number.parseInt(c.env.find((e: Manifest) => e.name === name).value, 10);
      const drain = seconds('MCP_WARDEN_DRAIN_DELAY');
      assert.ok(drain >= 5, 'endpoints drop the pod (its /readyz 503) while it still serves');
      assert.equal(c.lifecycle?.preStop, undefined, 'the proxy drains itself: no preStop to keep /readyz 200 meanwhile');
      const shutdown = seconds('MCP_WARDEN_SHUTDOWN_TIMEOUT');
      for (const other of pod.spec.containers.filter((x: Manifest) => x !== c))
        assert.ok(other.lifecycle.preStop.sleep.seconds >= drain + shutdown, `${other.name} outlives the proxy's drain`);
      assert.ok(pod.spec.terminationGracePeriodSeconds > drain + shutdown, 'the grace period holds the drain delay and --shutdown-timeout');
      const pdb = get(objects, 'PodDisruptionBudget', 'mcp-warden');
      assert.deepEqual(pdb.spec.selector, deployment.spec.selector);
      assert.ok(pdb.spec.maxUnavailable < deployment.spec.replicas);
      const spread = pod.spec.topologySpreadConstraints.find((t: Manifest) => t.topologyKey === 'kubernetes.io/hostname');
      assert.deepEqual(spread.labelSelector, deployment.spec.selector);
    });

    test('only the monitoring namespace reaches the admin port; clients reach the proxy, and only the proxy', () => {
      assert.deepEqual(proxyNetworkProblems(objects), []);
      const withoutPolicy = objects.filter((o) => !(o.kind === 'NetworkPolicy' && o.metadata.name === 'mcp-warden'));
      assert.ok(proxyNetworkProblems(withoutPolicy).includes('the admin port is open beyond the monitoring namespace'));
    });
  });
}

describe('overlay fleet', () => {
  const objects = kustomize(new URL('fleet', OVERLAYS).pathname);
  const proxyEnv = (copy: Manifest[]): Manifest[] => containerOf(get(copy, 'Deployment', 'mcp-warden'), 'mcp-warden')!.env;

  test('Redis asks for the password in a Secret, which the state URL carries; only the replicas reach Redis and the peer port', () => {
    assert.deepEqual(fleetProblems(objects), []);
    const peer = proxyEnv(objects).find((e) => e.name === 'MCP_WARDEN_PEER_ADDRESS')!.value as string;
    assert.equal(proxyEnv(objects).find((e) => e.name === 'POD_IP')?.valueFrom?.fieldRef?.fieldPath, 'status.podIP');
    const at = parsePeerAddress(peer.replace('$(POD_IP)', '10.0.3.7'));
    assert.equal(at.host, '10.0.3.7');
    assert.equal(parsePeerAddress(peer.replace('$(POD_IP)', 'fd00::7')).host, 'fd00::7', 'an IPv6 pod address parses too');
    assert.equal(portOf(containerOf(get(objects, 'Deployment', 'mcp-warden'), 'mcp-warden')!, 'peer').containerPort, at.port);
  });

  test('the checks find a fleet that dropped the password or a NetworkPolicy', () => {
    const noRequirepass = changed(objects, (copy) => {
      const redis = containerOf(get(copy, 'Deployment', 'mcp-warden-redis'), 'redis')!;
      redis.args.splice(redis.args.indexOf('--requirepass'), 2);
    });
    assert.ok(fleetProblems(noRequirepass).includes('Redis asks for no password from a Secret'));
    const noPassword = changed(objects, (copy) => {
      const state = proxyEnv(copy).find((e) => e.name === 'MCP_WARDEN_STATE')!;
      state.value = state.value.replace(/:\$\(\w+\)@/, '');
    });
    assert.ok(fleetProblems(noPassword).includes("MCP_WARDEN_STATE carries no password, or not Redis' one"));
    const noRedisPolicy = changed(objects, (copy) => copy.splice(copy.indexOf(get(copy, 'NetworkPolicy', 'mcp-warden-redis')), 1));
    assert.ok(fleetProblems(noRedisPolicy).includes('Redis is reachable by others than the replicas'));
    const noPeerRule = changed(objects, (copy) => {
      const policy = get(copy, 'NetworkPolicy', 'mcp-warden');
      policy.spec.ingress = policy.spec.ingress.filter((r: Manifest) => !r.ports.some((p: Manifest) => p.port === 'peer'));
    });
    assert.ok(fleetProblems(noPeerRule).includes('the peer port is reachable by others than the replicas'));
  });
});

describe('overlay sidecar', () => {
  const objects = kustomize(new URL('sidecar', OVERLAYS).pathname);

  test("the proxy fronts the server in its own pod, over loopback, and the server's port stays closed", () => {
    const pod = get(objects, 'Deployment', 'mcp-warden').spec.template.spec;
    const server = pod.containers.find((c: Manifest) => c.name !== 'mcp-warden');
    const upstream = new URL(
      get(objects, 'ConfigMap', containerOf(get(objects, 'Deployment', 'mcp-warden'), 'mcp-warden')!.envFrom[0].configMapRef.name).data
        .MCP_WARDEN_UPSTREAM,
    );
    assert.equal(upstream.hostname, '127.0.0.1');
    assert.equal(portOf(server, 'server').containerPort, Number(upstream.port));
    assert.equal(find(objects, 'Deployment', 'mcp-warden-redis'), undefined, 'no Redis');
    assert.equal(get(objects, 'Service', 'mcp-warden').spec.sessionAffinity, 'ClientIP', 'a session stays on the replica that holds it');
    const opened = changed(objects, (copy) => get(copy, 'NetworkPolicy', 'mcp-warden').spec.ingress.push({ ports: [{ port: 'server' }] }));
    assert.ok(proxyNetworkProblems(opened).includes("mcp-server's port server is reachable"));
  });
});

describe('the PrometheusRule', () => {
  const RULES = `groups:
  - name: mcp-warden
    rules:
      - alert: McpWardenProxyErrors
        expr: sum(rate(mcp_warden_proxy_errors_total[5m])) > 0
        for: 10m
        labels: { severity: warning }
        annotations: { summary: the proxy answered in the server's place }
`;

  test("is a Prometheus rules file's groups as the prometheus-operator takes them", async () => {
    const resource = parse(prometheusRule(RULES)) as Manifest;
    assert.equal(await schemaError(resource), undefined);
    assert.deepEqual(resource.spec.groups, parse(RULES).groups);
  });

  test('ships in every overlay, generated from deploy/prometheus/alerts.yaml', {
    skip: existsSync(ALERTS) ? false : 'deploy/prometheus/alerts.yaml does not exist yet (#44)',
  }, () => {
    assert.equal(
      existsSync(PROMETHEUS_RULE) && readFileSync(PROMETHEUS_RULE, 'utf8'),
      prometheusRule(readFileSync(ALERTS, 'utf8')),
      'regenerate: node --import tsx test/helpers/prometheus-rule.ts > deploy/kubernetes/base/prometheusrule.yaml',
    );
    for (const overlay of readdirSync(OVERLAYS)) get(kustomize(new URL(overlay, OVERLAYS).pathname), 'PrometheusRule', 'mcp-warden');
  });
});

/** `objects` with `change` made to a deep copy of them. */
function changed(objects: Manifest[], change: (copy: Manifest[]) => void): Manifest[] {
  const copy = structuredClone(objects);
  change(copy);
  return copy;
}
