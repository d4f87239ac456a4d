import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // `import … from 'spillway'` inside the repo runs the TypeScript source, not a possibly stale dist/.
  resolve: { alias: [{ find: /^spillway$/, replacement: path.resolve(import.meta.dirname, 'src/index.ts') }] },
  test: {
    // Node-side suites. Renderer component tests run in jsdom via their own file-level environment comment.
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    exclude: ['node_modules', 'dist', 'release'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    setupFiles: ['test/setup.ts'],
    // The JSON report lets .ci/run print a plain 'N passed, N failed' closing line.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
  },
});
