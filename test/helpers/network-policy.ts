// Who a set of NetworkPolicies lets reach a pod's port: enough of Kubernetes' rules to check
// deploy/kubernetes (podSelector by matchLabels, Ingress rules, ports by name or number).
import type { Manifest } from './kustomize.ts';

/** Whoever may connect: 'anyone', or the `from` peers of the rules that admit the port (none: nobody). */
export type Admitted = 'anyone' | Manifest[];

const selects = (selector: Manifest | undefined, labels: Record<string, string>): boolean =>
  Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

/** Who `objects`' NetworkPolicies let reach `port` (a container port: its name and number) of a pod labelled `labels`. */
export function admitted(objects: Manifest[], labels: Record<string, string>, port: Manifest): Admitted {
  const policies = objects.filter(
    (o) => o.kind === 'NetworkPolicy' && (o.spec.policyTypes ?? ['Ingress']).includes('Ingress') && selects(o.spec.podSelector, labels),
  );
  if (policies.length === 0) return 'anyone';
  const peers: Manifest[] = [];
  for (const rule of policies.flatMap((p) => p.spec.ingress ?? [])) {
    const ports = rule.ports as Manifest[] | undefined;
    if (ports && !ports.some((p) => p.port === port.name || p.port === port.containerPort)) continue;
    if (rule.from === undefined || rule.from.length === 0) return 'anyone';
    peers.push(...rule.from);
  }
  return peers;
}
