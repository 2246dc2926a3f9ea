// Version sets rules apply to, named once.
import { VERSIONS } from '../mcp/versions.ts';

export const ALL: readonly string[] = VERSIONS.map((v) => v.version);
export const MODERN: readonly string[] = VERSIONS.filter((v) => v.era === 'modern').map((v) => v.version);
export const LEGACY: readonly string[] = VERSIONS.filter((v) => v.era === 'legacy').map((v) => v.version);
/** Versions from `first` on. */
export const from = (first: string): readonly string[] => ALL.filter((v) => v >= first);
/** Versions up to and including `last`. */
export const until = (last: string): readonly string[] => ALL.filter((v) => v <= last);
