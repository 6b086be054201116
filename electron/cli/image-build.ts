import { parseArgs } from 'node:util';
import { SANDBOX_IMAGE, SANDBOX_IMAGE_VERSION } from '../../shared/constants.js';
import { openEngine } from '../engine/open-engine.js';
import { stepboxHome } from '../engine/trace/episode-store.js';
import type { CliCommand } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { EXIT, InfraError } from './command.js';

const HELP = `stepbox image build [--offline] [--tag TAG] [--json]

Builds the sandbox image ${SANDBOX_IMAGE} (label stepbox.image.version=${SANDBOX_IMAGE_VERSION}).
First probes an image registry (≤ 5 s; STEPBOX_REGISTRY_PROBE_URL overrides where). If it
answers: docker build of resources/sandbox/Dockerfile. Otherwise: the offline builder
resources/sandbox/build-offline.sh (debootstrap from Debian packages; needs root and
debootstrap; STEPBOX_DEBIAN_MIRROR sets its mirror), imported with the engine's client:
\`docker import\`, or on Podman \`podman import\` through DOCKER_HOST (so a rootless user's
image lands in their own store: sudo --preserve-env=DOCKER_HOST). Progress goes to stderr;
the path taken is printed.

Options:
  --offline   skip the probe and take the offline path
  --tag TAG   build under another tag (default ${SANDBOX_IMAGE}; stepbox uses only the default)
  --json      print {tag, version, path, reason, duration_ms} on stdout

Exit 0 built, 3 when the engine, debootstrap, the docker/podman client or root is missing (with the fix).

Examples:
  npx stepbox image build
  sudo npx stepbox image build --offline
  sudo --preserve-env=DOCKER_HOST npx stepbox image build --offline   # rootless Podman
`;

/** `stepbox image build` — builds the sandbox image by the registry or the offline path. */
export const command: CliCommand = {
  name: 'image build',
  summary: 'build the sandbox image (registry or offline debootstrap path)',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          offline: { type: 'boolean', default: false },
          tag: { type: 'string' },
          json: { type: 'boolean', default: false },
        },
        strict: true,
        allowPositionals: false,
      }),
    );
    // No sweep: building an image closes no trace and removes no container.
    const engine = (() => {
      try {
        return openEngine({ env: io.env, sweep: false });
      } catch (e) {
        const home = stepboxHome(io.env);
        throw new InfraError(
          `the store at ${home} is not usable: ${(e as Error).message}`,
          `make ${home} writable, or set STEPBOX_HOME to a writable directory`,
        );
      }
    })();
    const built = await engine
      .buildSandboxImage({
        offline: values.offline,
        ...(values.tag ? { tag: values.tag } : {}),
        progress: (line) => io.stderr.write(line + '\n'),
        env: io.env,
      })
      .finally(() => engine.close());
    if (!built.ok) {
      const { code, message, fix } = built.error;
      if (code === 'docker_unreachable' || code === 'tool_missing') throw new InfraError(message, fix);
      io.stderr.write(`stepbox image build: ${message}\n`);
      return EXIT.failed;
    }
    const result = built.value;
    const seconds = (result.durationMs / 1000).toFixed(1);
    if (values.json) {
      io.stdout.write(
        JSON.stringify({
          tag: result.tag,
          version: result.version,
          path: result.path,
          reason: result.reason,
          duration_ms: Math.round(result.durationMs),
        }) + '\n',
      );
    } else {
      io.stdout.write(
        `built ${result.tag} (version ${result.version}) by the ${result.path} path in ${seconds} s (${result.reason})\n`,
      );
    }
    return EXIT.ok;
  },
};
