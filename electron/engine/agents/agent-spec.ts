import { resolve } from 'node:path';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { AgentFailure } from './agent.js';
import type { ContextPolicy } from './openai-agent.js';
import {
  endpointSpec,
  missingArgument,
  OPENAI_SPEC,
  runsOwnProgramSpec,
  withForms,
} from '../../../shared/agent-kind.js';

/**
 * A parsed agent spec: `scripted:FILE`, `replay:EPISODE`, `openai:MODEL[@BASE_URL]`,
 * `anthropic:MODEL[@BASE_URL]`, `manual`, `exec:CMD`, `sandbox:CMD` or a recipe's name
 * (`codex`, `claude-code`).
 */
export type AgentSpec =
  | { readonly kind: 'scripted'; readonly path: string }
  | { readonly kind: 'replay'; readonly episode: string }
  | { readonly kind: 'openai'; readonly model: string; readonly baseUrl?: string }
  | { readonly kind: 'anthropic'; readonly model: string; readonly baseUrl?: string }
  | { readonly kind: 'gemini'; readonly model: string; readonly baseUrl?: string }
  | { readonly kind: 'manual' }
  | { readonly kind: 'exec'; readonly command: string }
  | { readonly kind: 'sandbox'; readonly command: string }
  | { readonly kind: 'recipe'; readonly name: string }
  | { readonly kind: 'oracle' };

/** The accepted forms, for error messages and help. */
export const AGENT_SPEC_FORMS = `scripted:FILE, replay:EPISODE, ${endpointSpec('openai')}, ${endpointSpec('anthropic')}, ${endpointSpec('gemini')} (the @URL optional), manual, exec:CMD or sandbox:CMD (with --model SOURCE), a recipe: codex, claude-code, gemini, … (stepbox agents list), or oracle (a Harbor task's solution/solve.sh)`;

/** A recipe's name as an agent spec: a bare lowercase word. */
const RECIPE_NAME = /^[a-z][a-z0-9-]*$/;

/** True for the agents that run a program of their own, answered through the model endpoint (`--model`). */
export const runsOwnProgram = runsOwnProgramSpec;

/** The accepted `--model` sources of an exec agent, for error messages and help. */
export const MODEL_SOURCE_FORMS = `${endpointSpec('openai')}, ${endpointSpec('anthropic')}, ${endpointSpec('gemini')}, scripted:FILE, replay:EPISODE or manual`;

/** `MODEL@http(s)://…`: the endpoint is what follows the last `@` that starts a URL. */
const MODEL_AT_URL = /^(.+)@(https?:\/\/\S+)$/;

/**
 * Checks an endpoint URL: http(s), and no credentials in it (the URL is recorded in the
 * trace header; a key belongs in OPENAI_API_KEY, which is never recorded).
 */
export function checkBaseUrl(url: string, where: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AgentFailure(
      'bad_agent_spec',
      `${where}: "${url}" is not a URL; e.g. http://127.0.0.1:11434/v1`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new AgentFailure(
      'bad_agent_spec',
      `${where}: the endpoint must be an http(s) URL, not ${parsed.protocol}`,
    );
  if (parsed.username || parsed.password)
    throw new AgentFailure(
      'bad_agent_spec',
      `${where}: the endpoint URL holds credentials; remove them and put the key in OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY (never recorded)`,
    );
  return url;
}

/**
 * The kind a spec names (the word before its first `:`, or the bare word), without checking
 * the rest: for a recorded spec (untrusted), whose kind's driver is then asked.
 */
export function specKind(spec: string): string {
  const colon = spec.indexOf(':');
  return colon > 0 ? spec.slice(0, colon) : spec;
}

/** Parses an agent spec; throws an AgentFailure(`bad_agent_spec`) naming the accepted forms. */
export function parseAgentSpec(spec: string): AgentSpec {
  if (spec === 'manual') return { kind: 'manual' };
  if (spec === 'oracle') return { kind: 'oracle' };
  if (RECIPE_NAME.test(spec)) return { kind: 'recipe', name: spec };
  const colon = spec.indexOf(':');
  const kind = colon > 0 ? spec.slice(0, colon) : spec;
  const arg = colon > 0 ? spec.slice(colon + 1) : '';
  if (arg === '' && kind !== 'manual') {
    throw new AgentFailure(
      'bad_agent_spec',
      withForms(`agent spec "${spec}" ${missingArgument(kind, AGENT_SPEC_FORMS)}.`, AGENT_SPEC_FORMS),
    );
  }
  switch (kind) {
    case 'scripted':
      return { kind: 'scripted', path: arg };
    case 'replay':
      return { kind: 'replay', episode: arg };
    case 'openai': {
      const m = MODEL_AT_URL.exec(arg);
      if (!m) return { kind: 'openai', model: arg };
      return { kind: 'openai', model: m[1], baseUrl: checkBaseUrl(m[2], `agent spec "openai:${m[1]}@…"`) };
    }
    case 'anthropic': {
      const m = MODEL_AT_URL.exec(arg);
      if (!m) return { kind: 'anthropic', model: arg };
      return {
        kind: 'anthropic',
        model: m[1],
        baseUrl: checkBaseUrl(m[2], `agent spec "anthropic:${m[1]}@…"`),
      };
    }
    case 'gemini': {
      const m = MODEL_AT_URL.exec(arg);
      if (!m) return { kind: 'gemini', model: arg };
      return { kind: 'gemini', model: m[1], baseUrl: checkBaseUrl(m[2], `agent spec "gemini:${m[1]}@…"`) };
    }
    case 'exec':
      return { kind: 'exec', command: arg };
    case 'sandbox':
      return { kind: 'sandbox', command: arg };
    default:
      throw new AgentFailure(
        'bad_agent_spec',
        withForms(
          `agent spec "${spec}": "${kind}" is not a kind of agent; write e.g. ${OPENAI_SPEC} or scripted:FILE.`,
          AGENT_SPEC_FORMS,
        ),
      );
  }
}

/** Makes a spec independent of the current directory (scripted paths become absolute), for the trace header. */
export function normalizeAgentSpec(spec: string, cwd = process.cwd()): string {
  const parsed = parseAgentSpec(spec);
  return parsed.kind === 'scripted' ? `scripted:${resolve(cwd, parsed.path)}` : spec;
}

/** Agent settings a caller gives (base URL, temperature, seed, model source…): not what the engine fills in. */
export type CallerAgentOptions = Omit<AgentOptions, 'skip' | 'loadEpisode'>;

/** What building an agent may need besides its spec. */
export interface AgentOptions {
  /** Decisions already made (a fork at K or a resume): a scripted or replay agent skips that many. */
  readonly skip?: number;
  readonly baseUrl?: string;
  readonly temperature?: number;
  readonly seed?: number;
  readonly retryBaseMs?: number;
  readonly maxAttempts?: number;
  /** What an openai agent does on a context-window overflow (default `end`). */
  readonly contextPolicy?: ContextPolicy;
  /** The events of a recorded episode (its lineage included), for `replay:`. */
  readonly loadEpisode?: (id: string) => readonly TraceEvent[];
  readonly cwd?: string;
  /** What answers an exec agent's model calls (`--model`): any agent spec but `exec:`; `skip` applies to it. */
  readonly model?: string;
  /** The model name an exec:/sandbox: agent's endpoint serves instead of its source's (a replay serves the recorded one). */
  readonly servedModel?: string;
  /** A `sandbox:` agent's files, put read-only at /opt/agent (`--agent-dir`). */
  readonly agentDir?: string;
  /** The store home recipes are installed in (default `$STEPBOX_HOME`). */
  readonly home?: string;
}

/**
 * Throws `bad_agent_spec` when `--agent-dir` is given to an agent that is not `sandbox:`
 * (a recipe brings its own files). Commands that start episodes later (batch, case run,
 * ab) call it before anything runs.
 */
export function checkAgentDir(spec: string, agentDir: string | undefined): void {
  if (agentDir !== undefined && parseAgentSpec(spec).kind !== 'sandbox') {
    throw new AgentFailure(
      'bad_agent_spec',
      `--agent-dir puts files at /opt/agent for a sandbox: agent; ${spec} is not one, so drop --agent-dir or use --agent 'sandbox:CMD'`,
    );
  }
}

/** The agent fields a trace header records (`agent` in the header: spec, kind, describe()). */
type RecordedAgent = Readonly<Record<string, unknown>>;

/**
 * Why `spec` cannot go on without an endpoint, saying whose agent it is: no agent given (the
 * window's empty “Agent”, "as recorded") goes on with the recorded one, and an error naming a
 * model the person never typed read as a complaint about their empty field.
 */
function noEndpoint(spec: string, recorded: RecordedAgent, fix: string): AgentFailure {
  // One sentence and the fix (the window shows it in the fork settings, beside "Agent").
  const why =
    recorded.spec === spec
      ? `The recorded agent ${spec} has no endpoint, and a default endpoint is never used`
      : `${spec} names no endpoint, and a recorded episode never goes on at a default endpoint`;
  return new AgentFailure('bad_agent_spec', `${why}. Fix: ${fix}`);
}

/**
 * The options an agent continuing a recorded episode (fork, resume, reopen) runs with.
 * An `openai:` agent reuses the recorded endpoint, temperature, seed and context policy
 * unless the caller gives its own; it is never sent to a default endpoint: when neither
 * the spec (`@URL`), the caller nor the recording names one, this throws
 * `bad_agent_spec` saying how to name it. Other kinds take the caller's options as they are.
 */
export function continuationOptions(
  spec: string,
  recorded: RecordedAgent,
  given: AgentOptions = {},
): AgentOptions {
  const parsed = parseAgentSpec(spec);
  if (parsed.kind === 'anthropic' || parsed.kind === 'gemini') {
    // Never a default endpoint: the spec names one, or the recording does.
    if (parsed.baseUrl || given.baseUrl) return given;
    if (recorded.kind === parsed.kind && typeof recorded.base_url === 'string')
      return { ...given, baseUrl: recorded.base_url };
    throw noEndpoint(spec, recorded, `--agent ${parsed.kind}:${parsed.model}@URL`);
  }
  if (parsed.kind !== 'openai') return given;
  const wasOpenAi = recorded.kind === 'openai';
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const baseUrl = parsed.baseUrl ?? given.baseUrl ?? (wasOpenAi ? str(recorded.base_url) : undefined);
  if (baseUrl === undefined) {
    throw noEndpoint(spec, recorded, `--agent openai:${parsed.model}@URL or --base-url URL`);
  }
  const policy = str(recorded.context_policy);
  return {
    ...given,
    ...(parsed.baseUrl ? {} : { baseUrl }),
    temperature: given.temperature ?? (wasOpenAi ? num(recorded.temperature) : undefined),
    seed: given.seed ?? (wasOpenAi ? num(recorded.seed) : undefined),
    contextPolicy:
      given.contextPolicy ??
      (wasOpenAi && (policy === 'end' || policy === 'drop_oldest') ? policy : undefined),
  };
}
