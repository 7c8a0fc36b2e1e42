import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The scheduler editor (issue #9): one HTML entry, bundled with Ursa's own cron and scheduler
// modules from src/, into dist/web/ where `ursa serve` (src/http/routes/web.ts) serves it.
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 2048,
    rolldownOptions: { input: { scheduler: fileURLToPath(new URL('scheduler.html', import.meta.url)) } },
  },
});
