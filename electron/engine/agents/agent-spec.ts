import { resolve } from 'node:path';
import { assertNever } from '../../../shared/assert-never.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { AgentFailure, type Agent } from './agent.js';
import { ManualAgent } from './manual-agent.js';
import { OpenAiAgent, type ContextPolicy } from './openai-agent.js';
import { recordedOutputs, ReplayAgent } from './replay-agent.js';
import { readScript, ScriptedAgent } from './scripted-agent.js';

/** A parsed agent spec: `scripted:FILE`, `replay:EPISODE`, `openai:MODEL` or `manual`. */
export type AgentSpec =
  | { readonly kind: 'scripted'; readonly path: string }
  | { readonly kind: 'replay'; readonly episode: string }
  | { readonly kind: 'openai'; readonly model: string }
  | { readonly kind: 'manual' };

/** The accepted forms, for error messages and help. */
export const AGENT_SPEC_FORMS = 'scripted:FILE, replay:EPISODE, openai:MODEL or manual';

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
}

/** Builds an agent from its spec. Throws AgentFailure for a bad spec or an unreadable script. */
export function createAgent(spec: string, options: AgentOptions = {}): Agent {
  const parsed = parseAgentSpec(spec);
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
    default:
      return assertNever(parsed, 'agent spec');
  }
}
