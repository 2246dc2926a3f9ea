// Request methods and the server capability each one needs. Which methods a version has is a
// column of the versions table; a method outside its version's list, or one whose capability the
// server did not declare, is an unknown method: -32601.
import { VERSIONS, versionInfo } from './versions.ts';

/** The client-to-server request methods of a version the spec defines; undefined for any other string. */
export function methodsOf(version: string | undefined): ReadonlySet<string> | undefined {
  return versionInfo(version)?.methods;
}

/** Every client-to-server request method some version defines. */
export const ALL_CLIENT_METHODS: ReadonlySet<string> = new Set(VERSIONS.flatMap((v) => [...v.methods]));

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
 * its capabilities at all, and the version has that capability to declare). Undefined when the
 * proxy cannot tell.
 */
export function isUnknownMethod(
  method: string,
  version: string | undefined,
  serverCapabilities: Record<string, unknown> | undefined,
): boolean | undefined {
  const known = methodsOf(version);
  if (known && !known.has(method)) return true;
  const capability = capabilityFor(method);
  if (capability && serverCapabilities && declarable(capability, version)) return !(capability in serverCapabilities);
  return known ? false : undefined;
}

/** Whether a server of `version` could declare `capability` (any, when the version is unknown). */
export const declarable = (capability: string, version: string | undefined): boolean =>
  capability !== 'completions' || (versionInfo(version)?.completionsCapability ?? true);
