// Layer rules live here as import bans, so the linter, not good intent, keeps them.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const nodeBuiltins = [
  'node:*',
  'fs',
  'fs/*',
  'path',
  'os',
  'child_process',
  'net',
  'http',
  'https',
  'crypto',
  'stream',
  'util',
  'zlib',
  'events',
  'worker_threads',
  'readline',
  'url',
];

/** @param {string[]} groups @param {string} message */
const ban = (groups, message) => ({ group: groups, message });

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'renderer/dist/**', 'test-results/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: false }],
      'no-console': 'off',
    },
  },
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ban(
              [
                ...nodeBuiltins,
                'dockerode',
                'electron',
                'react',
                'react-dom',
                'better-sqlite3',
                'ws',
                'openai',
                '@xterm/*',
                'monaco-editor',
              ],
              'shared/ is pure TypeScript: no Node, Docker, Electron, DOM or React.',
            ),
            ban(['**/electron/**', '**/renderer/**'], 'shared/ depends on nothing but itself.'),
          ],
        },
      ],
    },
  },
  {
    files: ['electron/engine/**/*.ts'],
    ignores: ['electron/engine/docker/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ban(['dockerode', 'docker-modem'], 'Only electron/engine/docker knows dockerode.'),
            ban(
              ['electron', '@xterm/*', 'monaco-editor', 'react', 'react-dom'],
              'The engine runs headless: no Electron or DOM.',
            ),
            ban(
              [
                '**/renderer/**',
                '../cli*',
                '../ipc*',
                '../server*',
                '../main*',
                '../../cli*',
                '../../ipc*',
                '../../server*',
              ],
              'The engine never imports its callers.',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['electron/engine/docker/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ban(
              ['electron', '@xterm/*', 'monaco-editor', 'react', 'react-dom'],
              'The engine runs headless: no Electron or DOM.',
            ),
            ban(['**/renderer/**'], 'The engine never imports the renderer.'),
          ],
        },
      ],
    },
  },
  {
    files: [
      'electron/*.ts',
      'electron/cli/**/*.ts',
      'electron/server/**/*.ts',
      'electron/bench/**/*.ts',
      'electron/services/**/*.ts',
    ],
    ignores: ['electron/main.ts', 'electron/preload.ts', 'electron/ipc.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ban(['electron'], "Only electron/{main,preload,ipc}.ts import 'electron'."),
            ban(['dockerode'], 'Only electron/engine/docker knows dockerode.'),
            ban(
              ['@xterm/*', 'monaco-editor', 'react', 'react-dom', '**/renderer/**'],
              'The main process never imports the renderer.',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ban(
              [...nodeBuiltins, 'dockerode', 'electron', 'better-sqlite3', 'ws', 'openai'],
              'The renderer talks only to the contract: no Node, Docker or Electron.',
            ),
            ban(
              ['**/electron/**'],
              'The renderer never imports from electron/; use the contract in shared/.',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.{ts,tsx}', 'scripts/**/*.js', 'bin/**/*.js', '*.config.{js,ts}'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
