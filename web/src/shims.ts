/**
 * The one Node global that the bundled document loader touches (`Buffer.byteLength` for the 64 KiB
 * limit of src/yaml/parse.ts), provided for the browser with the same meaning: UTF-8 bytes.
 */
const globals = globalThis as { Buffer?: unknown };
if (globals.Buffer === undefined) {
  const encoder = new TextEncoder();
  globals.Buffer = { byteLength: (text: string) => encoder.encode(text).length };
}

export {};
