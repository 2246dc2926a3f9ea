// The client-to-server request methods each version defines (from the official schemas'
// ClientRequest unions), and the server capability each one needs. A method outside its version's
// list, or one whose capability the server did not declare, is an unknown method: -32601.

const LEGACY_CORE = [
  'initialize', 'ping', 'resources/list', 'resources/templates/list', 'resources/read', 'resources/subscribe',
  'resources/unsubscribe', 'prompts/list', 'prompts/get', 'tools/list', 'tools/call', 'logging/setLevel', 'completion/complete',
];

export const CLIENT_METHODS: Readonly<Record<string, ReadonlySet<string>>> = {
  '2024-11-05': new Set(LEGACY_CORE),
  '2025-03-26': new Set(LEGACY_CORE),
  '2025-06-18': new Set(LEGACY_CORE),
  '2025-11-25': new Set([...LEGACY_CORE, 'tasks/get', 'tasks/result', 'tasks/cancel', 'tasks/list']),
  '2026-07-28': new Set([
    'server/discover', 'resources/list', 'resources/templates/list', 'resources/read', 'subscriptions/listen',
    'prompts/list', 'prompts/get', 'tools/list', 'tools/call', 'completion/complete',
  ]),
};

/** The methods a version the spec defines has; undefined for any other string (never a prototype key such as "constructor"). */
export function methodsOf(version: string | undefined): ReadonlySet<string> | undefined {
  return version !== undefined && Object.hasOwn(CLIENT_METHODS, version) ? CLIENT_METHODS[version] : undefined;
}

/** The server capability (a key of ServerCapabilities) a request method needs, if any. */
export function capabilityFor(method: string): string | undefined {
  const family = method.split('/')[0];
  switch (family) {
    case 'tools':
    case 'resources':
    case 'prompts':
    case 'logging':
    case 'tasks':
      return family;
    case 'completion':
      return 'completions';
    default:
      return undefined;
  }
}

/**
 * Whether `method` is one the server does not implement, as far as the proxy can tell: not a
 * method of the version, or one whose capability the server did not declare (when it declared
 * its capabilities at all). Undefined when the proxy cannot tell.
 */
export function isUnknownMethod(method: string, version: string | undefined, serverCapabilities: Record<string, unknown> | undefined): boolean | undefined {
  const known = methodsOf(version);
  if (known && !known.has(method)) return true;
  const capability = capabilityFor(method);
  // 2024-11-05 has no completions capability a server could declare.
  if (capability && serverCapabilities && !(capability === 'completions' && version === '2024-11-05')) return !(capability in serverCapabilities);
  return known ? false : undefined;
}
