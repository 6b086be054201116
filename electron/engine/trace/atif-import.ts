/**
 * ATIF trajectories from other harnesses (Harbor, Terminal-Bench, …) as read-only
 * stepbox episodes: `show`, `search`, QA `check` and the window read them like any
 * trace. There is no sandbox behind them (no snapshots), so `open`, `fork` and `replay`
 * have nothing to restore; the agent kind `atif` says where they came from.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { AtifTrajectory } from '../../../shared/atif.js';
import { outputResult, ToolResult } from '../../../shared/tool-result.js';
import { EpisodeStatus, ToolCall } from '../../../shared/trace-events.js';
import { formatBytes } from '../../../shared/format-bytes.js';
import { treeHashOf } from '../sandbox/manifest.js';
import { StoreError, type DiskEpisodeStore } from './episode-store.js';
import { describeIssues } from '../../../shared/validation-issues.js';

/** The largest ATIF file imported (a trajectory is text; this is generous). */
export const MAX_ATIF_BYTES = 256 * 1024 * 1024;

/** What an import made: one episode per trajectory. */
export interface AtifImport {
  readonly episodes: readonly { episode: string; steps: number; session_id: string | null }[];
}

function invalid(file: string, why: string): StoreError {
  return new StoreError('invalid_input', `${file} is not an ATIF trajectory stepbox can import: ${why}`);
}

/** The text of a message or content (multimodal parts: their text, images named). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p: { type?: string; text?: string | null; source?: { path?: string } | null }) =>
        p.type === 'image' ? `[image ${p.source?.path ?? ''}]` : (p.text ?? ''),
      )
      .join('');
  return '';
}

/** An observation as a tool result: stepbox's own exported result when it is one, else the text as stdout. */
function resultOf(content: unknown): ToolResult {
  const text = textOf(content);
  try {
    const parsed = ToolResult.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // Plain text: the usual case for other harnesses.
  }
  return outputResult(text);
}

/**
 * The ATIF files a path names: the file itself, or for a folder (what `stepbox export
 * --format atif` writes for several branches) its `*.json` and `*.jsonl` files in name
 * order, export sidecars (`*.meta.jsonl`) left out.
 */
export function atifFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  const files = readdirSync(path)
    .filter((f) => /\.jsonl?$/.test(f) && !f.endsWith('.meta.jsonl'))
    .sort()
    .map((f) => join(path, f))
    .filter((f) => statSync(f).isFile());
  if (files.length === 0)
    throw new StoreError('invalid_input', `${path} holds no *.json or *.jsonl file to import`);
  return files;
}

/** Parses a file as one ATIF document, or JSONL of them; every one validated. */
export function readAtif(file: string): AtifTrajectory[] {
  const size = statSync(file).size;
  if (size > MAX_ATIF_BYTES)
    throw invalid(file, `it is ${formatBytes(size)}, over the ${formatBytes(MAX_ATIF_BYTES)} limit`);
  const text = readFileSync(file, 'utf8');
  let docs: unknown[];
  try {
    docs = [JSON.parse(text)];
  } catch (whole) {
    const lines = text.split('\n').filter((l) => l.trim());
    try {
      docs = lines.map((l) => JSON.parse(l) as unknown);
    } catch {
      throw invalid(file, `it is neither JSON nor JSON lines (${(whole as Error).message})`);
    }
  }
  if (docs.length === 0) throw invalid(file, 'it is empty');
  return docs.map((doc, i) => {
    let parsed: ReturnType<typeof AtifTrajectory.safeParse>;
    try {
      parsed = AtifTrajectory.safeParse(doc);
    } catch (e) {
      // A document nested past the stack (subagents within subagents …) is refused, not a crash.
      throw invalid(file, `it cannot be checked (${(e as Error).message})`);
    }
    if (!parsed.success) {
      const where = docs.length > 1 ? `line ${i + 1}: ` : '';
      const issues = describeIssues(parsed.error.issues, '(root)', 5);
      throw invalid(file, `${where}${issues}`);
    }
    return parsed.data;
  });
}

/**
 * Imports every trajectory of an ATIF file as its own read-only episode. The first user
 * step is the goal; each agent step is a stepbox step (its message, tool calls and the
 * observation results that answer them); later user and system steps are recorded as
 * injected messages; an observation without a call id as a warning.
 */
export async function importAtif(store: DiskEpisodeStore, file: string): Promise<AtifImport> {
  const docs = readAtif(file);
  const episodes: AtifImport['episodes'][number][] = [];
  for (const doc of docs) {
    const firstUser = doc.steps.find((s) => s.source === 'user');
    const stamp = (s: { timestamp?: string | null }) => (s.timestamp ? Date.parse(s.timestamp) : NaN);
    const created = Number.isFinite(stamp(doc.steps[0])) ? stamp(doc.steps[0]) : Date.now();
    const own = (doc.extra?.stepbox ?? {}) as Record<string, unknown>;
    const name = String(own.task ?? doc.session_id ?? doc.trajectory_id ?? basename(file));
    const { episode, writer } = store.createEpisode({
      task: { name, goal: firstUser ? textOf(firstUser.message) : '' },
      task_path: file,
      agent: {
        spec: `atif:${doc.agent.name}`,
        kind: 'atif',
        name: doc.agent.name,
        version: doc.agent.version,
        ...(doc.agent.model_name ? { model: doc.agent.model_name } : {}),
        schema_version: doc.schema_version,
        session_id: doc.session_id ?? null,
      },
      image: 'none (imported ATIF trajectory)',
      created,
      parent_branch: null,
      fork_step: null,
    });
    // No workspace was recorded: every step's snapshot is the same empty manifest, which
    // is what marks a step complete for every reader.
    const treeHash = treeHashOf([]);
    const manifest = await store.snapshots(episode).putManifest({ treeHash, entries: [] });
    const snapshot = (step: number) =>
      writer.append({
        type: 'snapshot',
        step,
        source: 'harness',
        tree_hash: treeHash,
        manifest,
        changed: [],
        bytes: 0,
      } as never);
    snapshot(0);
    writer.commitStep();
    let k = 0;
    try {
      for (const s of doc.steps) {
        const t = Number.isFinite(stamp(s)) ? stamp(s) : undefined;
        const at = <T extends object>(e: T) => (t === undefined ? e : { ...e, t });
        if (s.source !== 'agent') {
          if (s === firstUser) continue;
          writer.append(
            at({
              type: 'injected',
              step: k + 1,
              source: 'human',
              role: s.source === 'system' ? 'system' : 'user',
              content: textOf(s.message),
            }) as never,
          );
          continue;
        }
        k += 1;
        const message = textOf(s.message);
        const calls: ToolCall[] = (s.tool_calls ?? []).map((c) => ({
          id: c.tool_call_id,
          name: c.function_name,
          arguments: c.arguments,
        }));
        const usage = s.metrics
          ? {
              prompt_tokens: s.metrics.prompt_tokens ?? undefined,
              completion_tokens: s.metrics.completion_tokens ?? undefined,
            }
          : null;
        const output = writer.append(
          at({
            type: 'model_output',
            step: k,
            source: 'agent',
            raw: message,
            message: {
              content: message || null,
              ...(calls.length
                ? {
                    tool_calls: calls.map((c) => ({
                      id: c.id,
                      type: 'function',
                      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
                    })),
                  }
                : {}),
            },
            usage,
          }) as never,
        ) as { seq: number };
        writer.append(
          at({
            type: 'action',
            step: k,
            source: 'agent',
            cause: output.seq,
            calls,
            final: calls.length ? null : message,
          }) as never,
        );
        const results = s.observation?.results ?? [];
        for (const c of calls) {
          const call = writer.append(
            at({
              type: 'tool_call',
              step: k,
              source: 'agent',
              call_id: c.id,
              name: c.name,
              arguments: c.arguments,
            }) as never,
          ) as { seq: number };
          const r = results.find((x) => x.source_call_id === c.id);
          if (r)
            writer.append(
              at({
                type: 'tool_result',
                step: k,
                source: 'environment',
                cause: call.seq,
                call_id: c.id,
                name: c.name,
                result: resultOf(r.content),
              }) as never,
            );
        }
        for (const r of results.filter((x) => !x.source_call_id))
          writer.append(
            at({
              type: 'warning',
              step: k,
              source: 'environment',
              code: 'atif_observation',
              message: textOf(r.content),
            }) as never,
          );
        snapshot(k);
        writer.commitStep();
      }
    } catch (e) {
      // Nothing half-imported stays behind.
      writer.abandon();
      store.removeEpisode(episode);
      throw invalid(file, `step ${k}: ${(e as Error).message}`);
    }
    const status = EpisodeStatus.safeParse(own.status);
    await writer.close({
      step: k,
      status: status.success ? status.data : 'failed',
      end_reason: typeof own.end_reason === 'string' ? own.end_reason : 'imported_atif',
      verifier: null,
      steps: k,
    });
    episodes.push({ episode, steps: k, session_id: doc.session_id ?? null });
  }
  return { episodes };
}
