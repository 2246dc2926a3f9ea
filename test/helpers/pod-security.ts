// The "restricted" Pod Security Standard (Kubernetes 1.32, the rules of its "latest" version) read
// off a pod spec, field by field, plus what deploy/kubernetes asks beyond it (a read-only root file
// system, resource requests and limits). Each problem is one string naming the container and the
// field; none means a namespace labelled pod-security.kubernetes.io/enforce=restricted admits it.
// https://kubernetes.io/docs/concepts/security/pod-security-standards/

// biome-ignore lint/suspicious/noExplicitAny: a parsed manifest of any shape; each rule reads the fields it checks
type Rec = Record<string, any>;

const VOLUME_TYPES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);
const SECCOMP = new Set(['RuntimeDefault', 'Localhost']);
const SELINUX_TYPES = new Set([undefined, '', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);

/** Every container of a pod spec, init and ephemeral ones included. */
const containersOf = (pod: Rec): Rec[] => [...(pod.initContainers ?? []), ...(pod.containers ?? []), ...(pod.ephemeralContainers ?? [])];

/** What keeps `pod` (a PodSpec) out of a restricted namespace, or out of deploy/kubernetes' own bar. */
export function restrictedProblems(pod: Rec): string[] {
  const problems: string[] = [];
  const podContext: Rec = pod.securityContext ?? {};
  for (const host of ['hostNetwork', 'hostPID', 'hostIPC']) if (pod[host] === true) problems.push(`pod: ${host}`);
  for (const s of podContext.sysctls ?? []) if (!SAFE_SYSCTLS.has(s.name)) problems.push(`pod: sysctl ${s.name}`);
  for (const v of pod.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== 'name');
    if (!VOLUME_TYPES.has(type!)) problems.push(`volume ${v.name}: ${type}`);
  }
  if (podContext.windowsOptions?.hostProcess === true) problems.push('pod: hostProcess');
  if (!SELINUX_TYPES.has(podContext.seLinuxOptions?.type)) problems.push('pod: seLinuxOptions.type');
  if (podContext.appArmorProfile?.type === 'Unconfined') problems.push('pod: appArmorProfile Unconfined');
  if (podContext.seccompProfile !== undefined && !SECCOMP.has(podContext.seccompProfile.type)) problems.push('pod: seccompProfile');
  if (podContext.runAsUser === 0) problems.push('pod: runAsUser 0');
  for (const c of containersOf(pod)) {
    const ctx: Rec = c.securityContext ?? {};
    const at = `container ${c.name}`;
    if (ctx.privileged === true) problems.push(`${at}: privileged`);
    if (ctx.allowPrivilegeEscalation !== false) problems.push(`${at}: allowPrivilegeEscalation is not false`);
    if (!(ctx.capabilities?.drop ?? []).includes('ALL')) problems.push(`${at}: capabilities.drop lacks ALL`);
    for (const cap of ctx.capabilities?.add ?? []) if (cap !== 'NET_BIND_SERVICE') problems.push(`${at}: capability ${cap} added`);
    const seccomp = ctx.seccompProfile?.type ?? podContext.seccompProfile?.type;
    if (!SECCOMP.has(seccomp)) problems.push(`${at}: seccompProfile is not RuntimeDefault or Localhost`);
    if ((ctx.runAsNonRoot ?? podContext.runAsNonRoot) !== true) problems.push(`${at}: runAsNonRoot is not true`);
    if (ctx.runAsUser === 0) problems.push(`${at}: runAsUser 0`);
    if (ctx.procMount !== undefined && ctx.procMount !== 'Default') problems.push(`${at}: procMount`);
    if (ctx.windowsOptions?.hostProcess === true) problems.push(`${at}: hostProcess`);
    if (!SELINUX_TYPES.has(ctx.seLinuxOptions?.type)) problems.push(`${at}: seLinuxOptions.type`);
    if (ctx.appArmorProfile?.type === 'Unconfined') problems.push(`${at}: appArmorProfile Unconfined`);
    for (const p of c.ports ?? []) if (p.hostPort) problems.push(`${at}: hostPort ${p.hostPort}`);
    // Beyond the profile: what deploy/kubernetes asks of every container.
    if (ctx.readOnlyRootFilesystem !== true) problems.push(`${at}: readOnlyRootFilesystem is not true`);
    const { requests, limits } = c.resources ?? {};
    if (!(requests?.cpu && requests?.memory && limits?.cpu && limits?.memory)) problems.push(`${at}: resource requests and limits`);
  }
  return problems;
}
