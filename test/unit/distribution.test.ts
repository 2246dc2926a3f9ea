// What ships besides the code (#45): the image (an init for child processes, a numeric non-root
// user, a writable directory for captures, every port exposed, no source maps or declarations, and
// .ci/run running the same steps), Docker examples that do not open the proxy to every interface
// and Host, a licence as package.json says, and a changelog in Keep a Changelog form. Pure: files
// are read, nothing is started.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';

const ROOT = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, ROOT), 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string; license: string; files: string[] };
const dockerfile = read('Dockerfile');
const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
const ci = read('.ci/run');

/** The container ports the Kubernetes manifests give the proxy (the base's, and the fleet's peer port). */
function manifestPorts(): number[] {
  const ports: number[] = [];
  for (const file of ['deploy/kubernetes/base/deployment.yaml', 'deploy/kubernetes/overlays/fleet/proxy.yaml'])
    for (const doc of parseAllDocuments(read(file))) {
      const { containers } = (
        doc.toJS() as { spec: { template: { spec: { containers: Array<{ ports?: Array<{ containerPort: number }> }> } } } }
      ).spec.template.spec;
      ports.push(...containers.flatMap((c) => (c.ports ?? []).map((p) => p.containerPort)));
    }
  return ports.sort();
}

test('the image: tini as PID 1, a numeric non-root user, /var/lib/mcp-warden for captures, every port exposed', () => {
  assert.match(runtimeStage, /apt-get install -y --no-install-recommends tini/);
  assert.match(runtimeStage, /^ENTRYPOINT \["\/usr\/bin\/tini", "--", "node", "dist\/cli\.js"\]$/m);
  const user = /^USER (\d+)(?::(\d+))?$/m.exec(runtimeStage);
  assert.ok(user && Number(user[1]) > 0, 'USER by number, not root: runAsNonRoot can verify it');
  assert.match(runtimeStage, /mkdir -p \/var\/lib\/mcp-warden && chown node:node \/var\/lib\/mcp-warden/);
  assert.equal(user[1], '1000', "the node user's uid, which owns /var/lib/mcp-warden");
  const exposed = /^EXPOSE (.+)$/m.exec(runtimeStage)![1]!.split(/\s+/).map(Number);
  assert.deepEqual(exposed.sort(), manifestPorts(), 'EXPOSE lists every port the manifests use');
  const base = read('deploy/kubernetes/base/deployment.yaml');
  assert.match(base, /mountPath: \/var\/lib\/mcp-warden/, 'the manifests mount a volume there');
});

test('no source maps or declarations in the runtime stage, pruned as .ci/run prunes them', () => {
  const prunes = [...dockerfile.matchAll(/find (dist|node_modules) (-type f \\\( .+? \\\) -delete)/g)];
  assert.deepEqual(
    prunes.map((m) => m[1]),
    ['dist', 'node_modules'],
  );
  for (const [, dir, expression] of prunes) {
    assert.match(expression!, /'\*\.map'.*'\*\.d\.ts'/);
    assert.ok(ci.includes(expression!), `.ci/run prunes ${dir} as the Dockerfile does`);
  }
  assert.match(ci, /apt-get install .*\btini\b/, '.ci/run installs tini');
  assert.match(ci, /tini -s -- node dist\/cli\.js --version/, '.ci/run starts the entrypoint through tini');
});

test('every docker run in the docs publishes on 127.0.0.1 only, or names the hosts it allows', () => {
  const pages = [
    'README.md',
    ...readdirSync(new URL('docs/', ROOT))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  let runs = 0;
  for (const page of pages) {
    const commands = read(page)
      .replace(/\\\n/g, ' ')
      .split('\n')
      .filter((line) => /^\s*docker run /.test(line));
    for (const command of commands) {
      runs++;
      const published = [...command.matchAll(/(?:-p|--publish)[ =](\S+)/g)].map((m) => m[1]!);
      for (const p of published)
        assert.ok(p.startsWith('127.0.0.1:') || command.includes('--allowed-hosts'), `${page}: ${command.trim()} publishes ${p}`);
    }
  }
  assert.ok(runs > 0, 'the docs show docker run');
});

test('LICENSE is the MIT licence package.json names; CHANGELOG.md keeps a changelog, this version included; both are published', () => {
  assert.equal(pkg.license, 'MIT');
  assert.match(read('LICENSE'), /^MIT License\n\nCopyright \(c\) \d{4} .+\n\nPermission is hereby granted, free of charge/);
  const changelog = read('CHANGELOG.md');
  assert.match(changelog, /^# Changelog\n/);
  assert.match(changelog, /\[Keep a Changelog\]\(https:\/\/keepachangelog\.com\/en\/1\.1\.0\/\)/);
  const releases = [...changelog.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((m) => m[1]);
  assert.equal(releases[0], 'Unreleased');
  assert.ok(releases.includes(pkg.version), `a section for ${pkg.version}`);
  for (const [, kind] of changelog.matchAll(/^### (.+)$/gm))
    assert.ok(['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'].includes(kind!), kind);
  // npm always packs LICENSE and README.md; the changelog only when `files` names it.
  assert.ok(pkg.files.includes('CHANGELOG.md'));
  assert.ok(pkg.files.includes('dist') && pkg.files.includes('config'));
});
