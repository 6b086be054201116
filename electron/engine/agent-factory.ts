import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { assertNever } from '../../shared/assert-never.js';
import { OPENAI_SPEC, withForms } from '../../shared/agent-kind.js';
import { AgentFailure, type Agent } from './agents/agent.js';
import {
  checkAgentDir,
  checkBaseUrl,
  MODEL_SOURCE_FORMS,
  normalizeAgentSpec,
  parseAgentSpec,
  runsOwnProgram,
  type AgentOptions,
} from './agents/agent-spec.js';
import { AnthropicAgent } from './agents/anthropic-agent.js';
import { GeminiAgent } from './agents/gemini-agent.js';
import type { HostedModelOptions } from './agents/hosted-model-request.js';
import { ManualAgent } from './agents/manual-agent.js';
import { OpenAiAgent } from './agents/openai-agent.js';
import { OracleAgent } from './agents/oracle-agent.js';
import { recipeLaunch } from './agents/recipes.js';
import { recordedOutputs, ReplayAgent } from './agents/replay-agent.js';
import { readScriptFile, ScriptedAgent } from './agents/scripted-agent.js';
import { ExecAgent } from './external/exec-agent.js';
import { SandboxAgent } from './external/sandbox-agent.js';

/*
 * Every kind of agent built from its spec, in one place above the folders that define them:
 * agents/ (the kinds that decide inside the harness) and external/ (the programs of their
 * own: exec:, sandbox:, recipes). The harness never builds an agent itself: it is handed
 * this through EpisodeParts (episode-parts.ts), so it depends on the Agent interface only.
 */

/** Builds an agent from its spec. Throws AgentFailure for a bad spec or an unreadable script. */
export function createAgent(spec: string, options: AgentOptions = {}): Agent {
  const parsed = parseAgentSpec(spec);
  if (options.model !== undefined && !runsOwnProgram(spec)) {
    throw new AgentFailure(
      'bad_agent_spec',
      `--model answers the model calls of an exec:, sandbox: or recipe agent; ${spec} decides by itself, so drop --model or use --agent exec:CMD`,
    );
  }
  checkAgentDir(spec, options.agentDir);
  switch (parsed.kind) {
    case 'scripted': {
      const path = resolve(options.cwd ?? process.cwd(), parsed.path);
      // A fork or reopen goes on with the recorded agent: its file may have gone since. Said as
      // what to do, not as the read's ENOENT (the window showed "cannot read script …: ENOENT").
      if (!existsSync(path))
        throw new AgentFailure(
          'script_error',
          `no script at ${path}: the agent's file is gone (moved or deleted) or was never there; give one that exists with --agent scripted:FILE`,
        );
      const script = readScriptFile(path);
      return new ScriptedAgent(
        `scripted:${path}`,
        path,
        script.lines,
        options.skip ?? 0,
        script.contextWindow,
        options.home,
      );
    }
    case 'replay': {
      if (!options.loadEpisode)
        throw new AgentFailure('bad_agent_spec', 'replay: agents need an episode store');
      const outputs = recordedOutputs(options.loadEpisode(parsed.episode));
      return new ReplayAgent(spec, outputs, options.skip ?? 0);
    }
    case 'openai': {
      if (parsed.baseUrl && options.baseUrl && parsed.baseUrl !== options.baseUrl) {
        throw new AgentFailure(
          'bad_agent_spec',
          `two endpoints: ${spec} names ${parsed.baseUrl} and --base-url ${options.baseUrl}; give one`,
        );
      }
      const baseUrl = parsed.baseUrl ?? options.baseUrl;
      return new OpenAiAgent(spec, {
        model: parsed.model,
        baseUrl: baseUrl === undefined ? undefined : checkBaseUrl(baseUrl, 'base URL'),
        temperature: options.temperature,
        seed: options.seed,
        retryBaseMs: options.retryBaseMs,
        maxAttempts: options.maxAttempts,
        contextPolicy: options.contextPolicy,
      });
    }
    case 'anthropic':
      return new AnthropicAgent(spec, hostedModelOptions(parsed, options));
    case 'gemini':
      return new GeminiAgent(spec, hostedModelOptions(parsed, options));
    case 'manual':
      return new ManualAgent();
    case 'oracle':
      return new OracleAgent(options.skip ?? 0);
    case 'exec':
      return new ExecAgent(spec, parsed.command, modelSource(spec, options), options.servedModel);
    case 'sandbox':
    case 'recipe': {
      const source = modelSource(spec, options);
      const launch =
        parsed.kind === 'recipe'
          ? recipeLaunch(parsed.name, options.home)
          : {
              command: parsed.command,
              env: {},
              homeFiles: {},
              agentDir: options.agentDir ? resolve(options.cwd ?? process.cwd(), options.agentDir) : null,
              volatile: [],
            };
      return new SandboxAgent(spec, launch, source, options.servedModel);
    }
    default:
      return assertNever(parsed, 'agent spec');
  }
}

/** What answers the model calls of an agent running its own program (`--model`). */
function modelSource(spec: string, options: AgentOptions): Agent {
  if (options.model === undefined) {
    throw new AgentFailure(
      'bad_agent_spec',
      withForms(`${spec} needs --model SOURCE to answer its model calls.`, MODEL_SOURCE_FORMS),
    );
  }
  const modelSpec = normalizeAgentSpec(options.model, options.cwd);
  if (runsOwnProgram(modelSpec)) {
    throw new AgentFailure(
      'bad_agent_spec',
      withForms(
        `--model ${options.model} runs a program of its own, so it cannot answer model calls: write e.g. ${OPENAI_SPEC} or scripted:FILE.`,
        MODEL_SOURCE_FORMS,
      ),
    );
  }
  return createAgent(modelSpec, {
    ...options,
    model: undefined,
    agentDir: undefined,
    servedModel: undefined,
  });
}

/** What an Anthropic or Gemini agent is built with: the spec's model and base URL (else --base-url), the run's sampling and retries. */
function hostedModelOptions(
  parsed: { readonly model: string; readonly baseUrl?: string },
  options: AgentOptions,
): HostedModelOptions {
  return {
    model: parsed.model,
    baseUrl:
      parsed.baseUrl ??
      (options.baseUrl === undefined ? undefined : checkBaseUrl(options.baseUrl, 'base URL')),
    temperature: options.temperature,
    retryBaseMs: options.retryBaseMs,
    maxAttempts: options.maxAttempts,
  };
}
