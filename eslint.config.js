// ESLint flat config. The rules are the ones that catch bugs, not style:
// - ESLint's own recommended set (unreachable code, duplicate keys, bad regexes, …);
// - typed rules over promises (a promise nobody awaits or catches, a promise where a callback is expected,
//   `await` on something that is not a promise) and unused variables;
// - exhaustive switches over unions (a new client, view or kind must be handled everywhere it is switched on);
// - React's rules of hooks for the inspector app.
// Formatting and taste (any, naming, quotes) are left alone on purpose.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  {
    ignores: ['dist/**', 'release/**', 'coverage/**', 'node_modules/**', '.cache/**', '.tmp/**', 'test-results/**', 'bench/.out/**', 'test/e2e/fixtures/**'],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, tseslint.configs.base],
    languageOptions: {
      // The two programs tsc checks (library + tests; the app + its tests), so the typed rules see the same types.
      parserOptions: { project: ['./tsconfig.json', './app/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // TypeScript checks these itself, better (types, globals, redeclared overloads).
      'no-undef': 'off',
      'no-redeclare': 'off',
      'no-dupe-class-members': 'off',
      'no-unused-vars': 'off',
      // Matching control bytes is this project's job (terminal escapes, binary sniffing, safe names): every such
      // regex is deliberate, so the rule would only ask for a disable comment at each one.
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    // The Vite config is in neither tsconfig (it is read by Vite alone): untyped rules only.
    files: ['vite.config.ts'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['app/**/*.{ts,tsx}', 'test/app/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    // Plain scripts (build, start, client install): no type information, ESLint's recommended set only.
    files: ['**/*.{js,mjs}'],
    extends: [js.configs.recommended],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', Buffer: 'readonly', fetch: 'readonly' },
    },
  },
);
