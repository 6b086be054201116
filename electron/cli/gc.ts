import { parseArgs } from 'node:util';
import { gc, parseDuration } from '../engine/trace/gc.js';
import type { CliCommand, CliIo } from './command.js';
import { openEngine } from '../engine/open-engine.js';
import { EXIT, UsageError } from './command.js';
import { formatAge, openStoreAndIndex, printJson } from './store-common.js';
import { parseOrUsage } from './parse-or-usage.js';
import { formatBytes } from '../../shared/format-bytes.js';
import { sweepStaleInstalls } from '../engine/agents/agent-install.js';
import { stepboxHome } from '../engine/trace/episode-store.js';
import type { SandboxProvider } from '../engine/sandbox/sandbox.js';

const HELP = `stepbox gc [--older-than D] [--agent-volumes] [--runtime-volumes] [--dry-run] [--json]

Frees space in $STEPBOX_HOME: removes episodes whose last activity is older than D
(when given; D like 7d, 12h, 30m, 2w, 1d12h), then snapshot blobs that no manifest
references. Episodes still being written by a live process are never touched.

Options:
  --older-than D    remove episodes idle for longer than D
  --agent-volumes   also remove, in Docker, the copies of agents' files (volumes
                    stepbox-agent-*, one per agent folder or npm agent version) that no
                    container uses; the next episode that needs one copies it again
  --runtime-volumes also remove, in Docker, the sandbox runtimes of other stepbox
                    versions (volumes stepbox-runtime-*, not this version's) that no
                    container uses
  --dry-run         report what would be removed, remove nothing
  --json            print {episodes: [{id, bytes, age_ms}], blobs, blob_bytes, bytes_freed,
                    skipped_live, dry_run} (+ agent_volumes / runtime_volumes:
                    {removed, in_use})

Examples:
  npx stepbox gc --older-than 7d
  npx stepbox gc --agent-volumes --dry-run --json
  npx stepbox gc --runtime-volumes
`;

/** What a prune of one kind removed (or would) and kept. */
type VolumePrune = Awaited<ReturnType<NonNullable<SandboxProvider['pruneAgentVolumes']>>>;

/** Which stepbox volumes `gc` prunes: the copies of agents' files, or old sandbox runtimes. */
type VolumeKind = 'agent' | 'runtime';

/** The volumes of each asked kind that no container uses, removed (or listed, on a dry run) through the engine's provider. */
async function pruneVolumes(
  io: CliIo,
  kinds: readonly VolumeKind[],
  dryRun: boolean,
): Promise<Map<VolumeKind, VolumePrune>> {
  const pruned = new Map<VolumeKind, VolumePrune>();
  if (kinds.length === 0) return pruned;
  // No sweep: gc removes what it names, never another process's containers.
  const engine = openEngine({ env: io.env, sweep: false });
  try {
    const provider = await engine.provider();
    for (const kind of kinds) {
      const prune = kind === 'agent' ? provider.pruneAgentVolumes : provider.pruneRuntimeVolumes;
      if (!prune)
        throw new UsageError(`--${kind}-volumes: the ${provider.backend} backend keeps no ${kind} volumes`);
      pruned.set(kind, await prune.call(provider, dryRun));
    }
    return pruned;
  } finally {
    await engine.close();
  }
}

/** `stepbox gc` — remove old episodes and unreferenced blobs. */
export const command: CliCommand = {
  name: 'gc',
  summary: 'remove old episodes and unreferenced snapshot blobs',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          'older-than': { type: 'string' },
          'dry-run': { type: 'boolean', default: false },
          'agent-volumes': { type: 'boolean', default: false },
          'runtime-volumes': { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
        },
      }),
    );
    let olderThanMs: number | undefined;
    if (values['older-than'] !== undefined) {
      const d = parseDuration(values['older-than']);
      if (d === null)
        throw new UsageError(
          `--older-than takes a duration like 7d, 12h or 30m, not "${values['older-than']}"`,
        );
      olderThanMs = d;
    }
    const dryRun = values['dry-run'];
    // Half-made agent installs of killed processes (agents/.tmp-*) go too.
    if (!dryRun) sweepStaleInstalls(stepboxHome(io.env));
    const { store, index } = openStoreAndIndex(io, { refresh: false });
    const report = await gc(store, { olderThanMs, dryRun });
    if (!dryRun) index.refresh(store);
    index.close();
    const kinds: VolumeKind[] = [
      ...(values['agent-volumes'] ? (['agent'] as const) : []),
      ...(values['runtime-volumes'] ? (['runtime'] as const) : []),
    ];
    const volumes = await pruneVolumes(io, kinds, dryRun);
    const agentVolumes = volumes.get('agent');
    const runtimeVolumes = volumes.get('runtime');
    if (values.json) {
      printJson(io, {
        ...report,
        dry_run: dryRun,
        ...(agentVolumes ? { agent_volumes: agentVolumes } : {}),
        ...(runtimeVolumes ? { runtime_volumes: runtimeVolumes } : {}),
      });
      return EXIT.ok;
    }
    const verb = dryRun ? 'would remove' : 'removed';
    for (const e of report.episodes)
      io.stdout.write(`${verb} ${e.id} (idle ${formatAge(e.age_ms)}, ${formatBytes(e.bytes)})\n`);
    for (const id of report.skipped_live) io.stdout.write(`kept ${id}: a live process is writing it\n`);
    io.stdout.write(
      `${dryRun ? 'Would free' : 'Freed'} ${formatBytes(report.bytes_freed)}: ${report.episodes.length} episode${report.episodes.length === 1 ? '' : 's'}, ${report.blobs} unreferenced blob${report.blobs === 1 ? '' : 's'} (${formatBytes(report.blob_bytes)})\n`,
    );
    for (const [kind, pruned] of volumes) {
      for (const v of pruned.removed) io.stdout.write(`${verb} volume ${v}\n`);
      io.stdout.write(
        `${kind === 'agent' ? 'Agent volumes' : 'Old runtime volumes'}: ${pruned.removed.length} ${dryRun ? 'unused' : 'removed'}, ${pruned.in_use.length} kept (a container uses ${pruned.in_use.length === 1 ? 'it' : 'them'})\n`,
      );
    }
    return EXIT.ok;
  },
};
