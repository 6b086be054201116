import { resolve } from 'node:path';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { AgentFailure, type Agent } from './agent.js';
import { ManualAgent } from './manual-agent.js';
import { OpenAiAgent, type ContextPolicy } from './openai-agent.js';
import { recordedOutputs, ReplayAgent } from './replay-agent.js';
import { readScript, ScriptedAgent } from './scripted-agent.js';
import { ExecAgent } from '../external/exec-agent.js';

/** A parsed agent spec: `scripted:FILE`, `replay:EPISODE`, `openai:MODEL`, `manual` or `exec:CMD`. */
export type AgentSpec =
  | { readonly kind: 'scripted'; readonly path: string }
  | { readonly kind: 'replay'; readonly episode: string }
  | { readonly kind: 'openai'; readonly model: string }
  | { readonly kind: 'manual' }
  | { readonly kind: 'exec'; readonly command: string };

/** The accepted forms, for error messages and help. */
export const AGENT_SPEC_FORMS =
  'scripted:FILE, replay:EPISODE, openai:MODEL, manual or exec:CMD (with --model SOURCE)';

/** The accepted `--model` sources of an exec agent, for error messages and help. */
export const MODEL_SOURCE_FORMS = 'openai:MODEL (with --base-url), scripted:FILE, replay:EPISODE or manual';

/** Parses an agent spec; throws an AgentFailure(`bad_agent_spec`) naming the accepted forms. */
export function parseAgentSpec(spec: string): AgentSpec {
  if (spec === 'manual') return { kind: 'manual' };
  const colon = spec.indexOf(':');
  const kind = colon > 0 ? spec.slice(0, colon) : spec;
  const arg = colon > 0 ? spec.slice(colon + 1) : '';
  if (arg === '' && kind !== 'manual') {
    throw new AgentFailure(
      'bad_agent_spec',
      `agent spec "${spec}" needs an argument; use ${AGENT_SPEC_FORMS}`,
    );
  }
  switch (kind) {
    case 'scripted':
      return { kind: 'scripted', path: arg };
    case 'replay':
      return { kind: 'replay', episode: arg };
    case 'openai':
      return { kind: 'openai', model: arg };
    case 'exec':
      return { kind: 'exec', command: arg };
    default:
      throw new AgentFailure(
        'bad_agent_spec',
        `unknown agent kind "${kind}" in "${spec}"; use ${AGENT_SPEC_FORMS}`,
      );
  }
}

/** Makes a spec independent of the current directory (scripted paths become absolute), for the trace header. */
export function normalizeAgentSpec(spec: string, cwd = process.cwd()): string {
  const parsed = parseAgentSpec(spec);
  return parsed.kind === 'scripted' ? `scripted:${resolve(cwd, parsed.path)}` : spec;
}

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
}

/** Builds an agent from its spec. Throws AgentFailure for a bad spec or an unreadable script. */
export function createAgent(spec: string, options: AgentOptions = {}): Agent {
  const parsed = parseAgentSpec(spec);
  if (options.model !== undefined && parsed.kind !== 'exec') {
    throw new AgentFailure(
      'bad_agent_spec',
      `--model answers the model calls of an exec: agent; ${spec} decides by itself, so drop --model or use --agent exec:CMD`,
    );
  }
  switch (parsed.kind) {
    case 'scripted': {
      const path = resolve(options.cwd ?? process.cwd(), parsed.path);
      return new ScriptedAgent(`scripted:${path}`, path, readScript(path), options.skip ?? 0);
    }
    case 'replay': {
      if (!options.loadEpisode)
        throw new AgentFailure('bad_agent_spec', 'replay: agents need an episode store');
      const outputs = recordedOutputs(options.loadEpisode(parsed.episode));
      return new ReplayAgent(spec, outputs, options.skip ?? 0);
    }
    case 'openai':
      return new OpenAiAgent(spec, {
        model: parsed.model,
        baseUrl: options.baseUrl,
        temperature: options.temperature,
        seed: options.seed,
        retryBaseMs: options.retryBaseMs,
        maxAttempts: options.maxAttempts,
        contextPolicy: options.contextPolicy,
      });
    case 'manual':
      return new ManualAgent();
    case 'exec': {
      if (options.model === undefined) {
        throw new AgentFailure(
          'bad_agent_spec',
          `${spec} needs --model SOURCE to answer its model calls: ${MODEL_SOURCE_FORMS}`,
        );
      }
      const modelSpec = normalizeAgentSpec(options.model, options.cwd);
      if (parseAgentSpec(modelSpec).kind === 'exec') {
        throw new AgentFailure('bad_agent_spec', `--model ${options.model}: use ${MODEL_SOURCE_FORMS}`);
      }
      const source = createAgent(modelSpec, { ...options, model: undefined });
      return new ExecAgent(spec, parsed.command, source);
    }
  }
}
