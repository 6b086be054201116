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

/** The rule that bans `patterns`: a later rule for the same files replaces an earlier one, so each block lists all its bans. */
const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

/** What no engine file imports: dockerode outside engine/docker, Electron and the DOM. */
const ENGINE_BANS = [
  ban(['dockerode', 'docker-modem'], 'Only electron/engine/docker knows dockerode.'),
  ban(
    ['electron', '@xterm/*', 'monaco-editor', 'react', 'react-dom'],
    'The engine runs headless: no Electron or DOM.',
  ),
];

/** What the main process's files (outside main, preload and ipc) never import. */
const MAIN_PROCESS_BANS = [
  ban(['electron'], "Only electron/{main,preload,ipc}.ts import 'electron'."),
  ban(['dockerode'], 'Only electron/engine/docker knows dockerode.'),
  ban(
    ['@xterm/*', 'monaco-editor', 'react', 'react-dom', '**/renderer/**'],
    'The main process never imports the renderer.',
  ),
];

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
    rules: restrict([
      ...ENGINE_BANS,
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
    ]),
  },
  {
    // The sandbox knows no episode: the harness builds on it, never the other way round.
    files: ['electron/engine/sandbox/**/*.ts'],
    rules: restrict([
      ...ENGINE_BANS,
      ban(
        ['**/renderer/**', '../../cli*', '../../ipc*', '../../server*', '../../services*'],
        'The engine never imports its callers.',
      ),
      ban(
        ['**/harness/**', '**/agents/**', '**/trace/**', '**/candidates/**', '**/cases/**', '**/batch/**'],
        'The sandbox knows no episode: engine/sandbox may not import the harness or what builds on it.',
      ),
    ]),
  },
  {
    // The agents and the harness import one way (test/unit/engine-layers.test.ts walks the whole
    // graph): agents/ ← harness/ ← external/; every kind is put together above them (agent-factory.ts).
    files: ['electron/engine/agents/**/*.ts'],
    rules: restrict([
      ...ENGINE_BANS,
      ban(
        ['**/renderer/**', '../../cli*', '../../ipc*', '../../server*', '../../main*', '../../services*'],
        'The engine never imports its callers.',
      ),
      ban(
        ['../harness/*', '../external/*', '../agent-factory*', '../open-engine*'],
        'agents/ is below the harness and external/: move what both need down, or up into agent-factory.ts.',
      ),
    ]),
  },
  {
    files: ['electron/engine/harness/**/*.ts'],
    rules: restrict([
      ...ENGINE_BANS,
      ban(
        ['**/renderer/**', '../../cli*', '../../ipc*', '../../server*', '../../main*', '../../services*'],
        'The engine never imports its callers.',
      ),
      ban(
        ['../external/*', '../agent-factory*', '../open-engine*'],
        'The harness asks an agent (agents/agent.ts, agent-driver.ts), never the kinds in external/; agents are built through EpisodeParts.',
      ),
    ]),
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
    rules: restrict(MAIN_PROCESS_BANS),
  },
  {
    // The CLI is a thin adapter: it reaches Docker only through engine functions (a terminal,
    // stats, the image build), never the adapter itself.
    files: ['electron/cli/**/*.ts'],
    rules: restrict([
      ...MAIN_PROCESS_BANS,
      ban(
        ['**/engine/docker/**'],
        'The CLI reaches Docker only through the engine (openEngine, engine/sandbox-image.ts, engine/sandbox/sandbox-terminal.ts).',
      ),
    ]),
  },
  {
    // One composition root: Docker is reached through openEngine's one connection, and a
    // sandbox or provider is asked for a capability (channel, terminal, stats, image build),
    // never tested for its class (issue 34.6). Only the Docker adapter, its provider and the
    // composition root make a connection.
    files: ['electron/**/*.ts'],
    ignores: [
      'electron/engine/docker/**',
      'electron/engine/sandbox/docker-provider.ts',
      'electron/engine/open-engine.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "BinaryExpression[operator='instanceof'][right.name=/^Docker(Sandbox|SandboxProvider|Engine)$/]",
          message:
            'Ask the sandbox or provider for the capability (channel, terminal, stats, buildTaskImage), not its class.',
        },
        {
          selector: 'NewExpression[callee.name=/^(Docker|DockerEngine)$/]',
          message:
            "A private Docker client: use the engine's one connection (openEngine: provider(), reachability(), sandboxImage()).",
        },
        {
          selector: 'CallExpression[callee.name=/^(createDockerProvider|engineAtSocket)$/]',
          message:
            "A provider or client of its own: open the engine (openEngine; another engine's socket is its dockerSocket option) and ask it for provider() or docker().",
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
