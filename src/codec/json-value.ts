// Readers of parsed JSON values, shared by every area: a JSON object is neither null nor an array.

/** Whether `v` is a JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `v` as a JSON object, or undefined when it is not one. */
export const asRecord = (v: unknown): Record<string, unknown> | undefined => (isObject(v) ? v : undefined);
