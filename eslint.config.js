// Lint (make lint; a phase of make test). typescript-eslint with type information for the rules
// that need it: floating and misused promises are errors, and so is unused code. Formatting is
// Prettier's (.prettierrc.json), checked in the same phase.
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'clients/typescript/dist/**',
      '**/node_modules/**',
      '**/*.d.ts',
      // Generated from docs/openapi.yaml (a drift test keeps it so).
      'clients/typescript/src/schema.ts',
      '.dev/**',
      '.test/**',
      '.test-node/**',
      '.test-faults/**',
      '.bench/**',
      '.bench-memory/**',
      '.scratch/**',
      'coverage/**',
      'charts/**',
    ],
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: {
        // The programs and the tests; the console's browser code; the typed client (tests included in both).
        project: ['./tsconfig.json', './tsconfig.ui-check.json', './clients/typescript/tsconfig.lint.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      'no-unused-private-class-members': 'error',
      'no-unreachable': 'error',
      'no-self-compare': 'error',
      // A binding a closure reads before its one assignment (wiring that depends on itself) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Declared types where the data comes from outside (JSON, the API server) are `any` at the edge on purpose in tests.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
)
