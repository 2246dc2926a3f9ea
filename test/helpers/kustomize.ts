// deploy/kubernetes rendered as `kubectl apply -k` renders it (`kubectl kustomize`, kustomize v5 in
// kubectl 1.27+), and each object checked against the schemas of its kind: Kubernetes' own
// (kubernetes-models) and the prometheus-operator's (ServiceMonitor, PrometheusRule). kubectl comes
// with the machine image, not with npm: without it the tests fail and say so, never skip.
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';

// biome-ignore lint/suspicious/noExplicitAny: a parsed manifest of any shape; the tests check each field they read
export type Manifest = Record<string, any>;

/** The objects `kubectl kustomize dir` renders. */
export function kustomize(dir: string): Manifest[] {
  const run = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw new Error(`kubectl kustomize ${dir}: ${run.error.message} (the deploy tests need kubectl 1.27 or newer on PATH)`);
  if (run.status !== 0) throw new Error(`kubectl kustomize ${dir} exited ${run.status}: ${run.stderr}`);
  return parseAllDocuments(run.stdout).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${dir}: ${doc.errors[0]!.message}`);
    return doc.toJS() as Manifest;
  });
}

/** The models package that holds an apiVersion's kinds. */
function modelsOf(apiVersion: string): string {
  if (apiVersion.startsWith('monitoring.coreos.com/')) return `@kubernetes-models/prometheus-operator/${apiVersion}`;
  return `kubernetes-models/${apiVersion}`;
}

/** Why `object` does not validate against its kind's schema, or undefined when it does. */
export async function schemaError(object: Manifest): Promise<string | undefined> {
  const models = (await import(modelsOf(object.apiVersion))) as Record<string, new (data: Manifest) => { validate(): void }>;
  const Model = models[object.kind];
  if (Model === undefined) return `no schema for ${object.apiVersion} ${object.kind}`;
  try {
    new Model(object).validate();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
