// What `check` does unless told otherwise. A leaf module: the command line shows these in --help
// without loading the probes.

export const CHECK_DEFAULTS = {
  protocol: 'auto',
  timeoutMs: 60_000,
  probeTimeoutMs: 10_000,
  connectTimeoutMs: 5_000,
  maxBytes: 1024 * 1024,
} as const;

export const CHECK_FORMATS = ['table', 'json', 'sarif', 'junit', 'markdown'] as const;
export type CheckFormat = (typeof CHECK_FORMATS)[number];
