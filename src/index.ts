/**
 * The `spillway` package root: what an agent imports.
 * `import { guardLargeResult } from 'spillway'`
 */
export * from './pipeline/index.js';
