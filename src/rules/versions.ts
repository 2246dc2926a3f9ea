// Version sets rules apply to, named once and derived from the versions table.
import { VERSIONS, type VersionInfo } from '../mcp/versions.ts';

/** The versions whose row has `fact`. */
export const where = (fact: (row: VersionInfo) => boolean): readonly string[] => VERSIONS.filter(fact).map((v) => v.version);

export const ALL: readonly string[] = where(() => true);
export const MODERN: readonly string[] = where((v) => v.era === 'modern');
export const LEGACY: readonly string[] = where((v) => v.era === 'legacy');
