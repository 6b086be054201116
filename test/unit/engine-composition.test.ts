import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * Issue 34.6: Docker is reached through openEngine's one connection, and sandboxes and
 * providers are asked for capabilities (channel, terminal, stats, taskImage), never
 * tested for their class; no provider is made beside it (the CLI and the bench included).
 * The scan fails when such code comes back; the lint cases prove
 * that `npm run lint` (eslint.config.js) refuses it too.
 */
const ROOT = join(import.meta.dirname, '..', '..');
/** The Docker adapter, its provider and the composition root: the only places a connection is made. */
const ALLOWED = [
  /^electron\/engine\/docker\//,
  /^electron\/engine\/sandbox\/docker-provider\.ts$/,
  /^electron\/engine\/open-engine\.ts$/,
];
const CLASS_TEST = /instanceof\s+Docker(Sandbox|SandboxProvider|Engine)\b/;
const PRIVATE_CLIENT = /new\s+Docker(Engine)?\s*\(|dockerClient\s*\(|engineAtSocket\s*\(/;
/** A provider made beside openEngine (the CLI's `sandbox exec`, the bench's sections once did). */
const PRIVATE_PROVIDER = /\bcreateDockerProvider\s*\(/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('engine composition', () => {
  it('no file outside the Docker adapter tests a class or makes its own Docker client or provider', () => {
    const offenders = sources(join(ROOT, 'electron'))
      .map((path) => relative(ROOT, path).split('\\').join('/'))
      .filter((path) => !ALLOWED.some((a) => a.test(path)))
      .flatMap((path) => {
        const text = readFileSync(join(ROOT, path), 'utf8');
        return [
          ...(CLASS_TEST.test(text) ? [`${path}: instanceof a Docker class`] : []),
          ...(PRIVATE_CLIENT.test(text) ? [`${path}: a Docker client of its own`] : []),
          ...(PRIVATE_PROVIDER.test(text) ? [`${path}: a Docker provider of its own`] : []),
        ];
      });
    expect(offenders).toEqual([]);
  });

  it('the linter refuses instanceof DockerSandbox and a private client or provider in the engine, services, CLI and bench', async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const cases = [
      [
        'electron/engine/doctor.ts',
        'import { DockerSandbox } from "./sandbox/docker-sandbox.js";\nexport const f = (s: unknown) => s instanceof DockerSandbox;\n',
      ],
      [
        'electron/bench/sandbox.ts',
        'import { DockerSandboxProvider } from "../engine/sandbox/docker-provider.js";\nexport const f = (p: unknown) => p instanceof DockerSandboxProvider;\n',
      ],
      [
        'electron/services/engine-ports.ts',
        'import { DockerEngine } from "../engine/docker/client.js";\nexport const c = new DockerEngine();\n',
      ],
      [
        'electron/cli/sandbox-exec.ts',
        'import { createDockerProvider } from "../engine/sandbox/docker-provider.js";\nexport const p = createDockerProvider();\n',
      ],
      [
        'electron/bench/sandbox-runsc.ts',
        'import { engineAtSocket } from "../engine/docker/client.js";\nexport const e = engineAtSocket("/run/x.sock");\n',
      ],
      [
        'electron/bench/workspace.ts',
        'import { createDockerProvider } from "../engine/sandbox/docker-provider.js";\nexport const p = createDockerProvider({ sweep: false });\n',
      ],
    ] as const;
    for (const [filePath, code] of cases) {
      const [result] = await eslint.lintText(code, { filePath: join(ROOT, filePath) });
      expect(
        result.messages.map((m) => m.ruleId),
        filePath,
      ).toContain('no-restricted-syntax');
    }
    const [adapter] = await eslint.lintText(
      'import { DockerEngine } from "./docker/client.js";\nexport const c = new DockerEngine();\n',
      {
        filePath: join(ROOT, 'electron/engine/open-engine.ts'),
      },
    );
    expect(adapter.messages.filter((m) => m.ruleId === 'no-restricted-syntax')).toEqual([]);
  });
});
