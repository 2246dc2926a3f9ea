// What comes from the shared store (a key's value, a publication) is input like a client's: anyone
// who can write to Redis can put anything there. Each value is checked here, where it comes in,
// against the shape this proxy writes; anything else is undefined (counted and ignored by the
// caller), never a throw and never a value that throws later in an exchange.
import { KNOWN_BOUNDS, STATE_BOUNDS } from '../config/defaults.ts';
import type { ClientInfo } from '../exchange/identity.ts';
import type { SessionFact } from '../exchange/sessions.ts';

/** The longest session key taken from the store (a session id is a header value: well under this). */
export const MAX_KEY_CHARS = STATE_BOUNDS.keyChars;

type Rec = Record<string, unknown>;

const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const optional = <T>(v: unknown, check: (v: unknown) => v is T): v is T | undefined => v === undefined || check(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isKey = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_KEY_CHARS;
const isClientInfo = (v: unknown): v is ClientInfo => isRecord(v) && optional(v.name, isString) && optional(v.version, isString);
const isKnownValues = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length <= KNOWN_BOUNDS.values && v.every((s) => typeof s === 'string' && s.length <= KNOWN_BOUNDS.chars);

/** A SessionFact as this proxy writes it, or undefined for anything else (`key`: the one it must be about). */
export function parseSessionFact(value: unknown, key?: string): SessionFact | undefined {
  if (!isRecord(value) || !isKey(value.key) || (key !== undefined && value.key !== key)) return undefined;
  const v = value;
  switch (v.kind) {
    case 'initialized':
      return optional(v.sessionId, isString) &&
        optional(v.version, isString) &&
        optional(v.serverCapabilities, isRecord) &&
        optional(v.clientCapabilities, isRecord) &&
        optional(v.clientInfo, isClientInfo)
        ? (v as SessionFact)
        : undefined;
    case 'discovered':
      return optional(v.sessionId, isString) && optional(v.serverCapabilities, isRecord) ? (v as SessionFact) : undefined;
    case 'tools':
      // The page's tools are the server's, read like any tools/list (sessions.ts takes what it can).
      return optional(v.sessionId, isString) && typeof v.firstPage === 'boolean' && typeof v.lastPage === 'boolean'
        ? (v as SessionFact)
        : undefined;
    case 'known':
      return isKnownValues(v.values) ? (v as SessionFact) : undefined;
    case 'tools-changed':
    case 'ended':
      return v as SessionFact;
    default:
      return undefined;
  }
}

/** JSON text parsed, or undefined when it is not JSON (or not a string at all). */
export function parseJson(text: unknown): unknown {
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
