/**
 * The page is type-checked without Node's types; this is the part of `Buffer` that the bundled
 * src/yaml/parse.ts uses, which shims.ts provides at run time.
 */
declare const Buffer: { byteLength(text: string, encoding?: string): number };

/** Style sheets imported for their side effect; Vite bundles them. */
declare module '*.css';
