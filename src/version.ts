/** Kept in sync with package.json by test/consistency.test.ts. */
export const VERSION = '0.1.0';
