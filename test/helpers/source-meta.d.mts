// Types for source-meta.mjs (plain JavaScript, for test/run.mjs).
export declare const SOURCE_META_DEFINE: Record<string, string>;
export declare function sourceMeta(filter: RegExp): { name: string; setup(build: unknown): void };
