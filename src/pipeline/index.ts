export * from './types.js';
export * from './limits.js';
export * from './layout.js';
export * from './config.js';
export * from './estimate/index.js';
