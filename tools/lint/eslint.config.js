// ESLint for the whole repository: `npm run lint` (CI runs it). typescript-eslint's type-aware
// rules catch this codebase's real risks: a promise nobody awaits (a lost error, a write that
// races the answer, an unhandled rejection that ends the process) and a promise handed where a
// callback's result is ignored (express and node event handlers, React's). Rules that judge an
// assertion needless are left out: TypeScript 6 (the linter's) and 7 (the build's) differ in
// places (the DOM library), and such a rule then removes what the build needs.
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'web/dev-dist/**',
      'coverage/**',
      'reports/**',
      'bench/results/**',
      'data/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
      '**/*.d.ts',
      '**/*.d.mts',
    ],
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        tsconfigRootDir: root,
        // Three programs: everything that runs on Node (the packages, the services and every
        // test, as tsconfig.check.json type-checks the tests), the web app, its service worker.
        // One program per service had each parse the shared packages and Node's and the
        // libraries' types again: twice the linter's CPU time for the same findings.
        project: ['tools/lint/tsconfig.node.json', 'web/tsconfig.json', 'web/tsconfig.sw.json'],
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
);
