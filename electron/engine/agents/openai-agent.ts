import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { OPENAI_SPEC } from '../../../shared/agent-kind.js';
import { logger } from '../log.js';
import type { ChatMessage } from '../model-api/chat-message.js';
import {
  NEEDS_NOTHING,
  AgentFailure,
  modelEndpointFailure,
  type Agent,
  type DecideInput,
  type Decision,
} from './agent.js';
import { rawOf } from './scripted-agent.js';

const log = logger('openai');

/** Settings of an OpenAI-compatible agent. The API key is read here and never recorded. */
export interface OpenAiAgentOptions {
  readonly model: string;
  /** e.g. http://127.0.0.1:11434/v1 (Ollama); defaults to OPENAI_BASE_URL, then the client's default. */
  readonly baseUrl?: string;
  readonly apiKey?: string;
  readonly temperature?: number;
  readonly seed?: number;
  /** Attempts per request, the first included (429, 5xx and network errors are retried). */
  readonly maxAttempts?: number;
  /** First backoff delay; doubles per retry. */
  readonly retryBaseMs?: number;
  /** Ask for top-5 logprobs (dropped automatically when the endpoint refuses them). */
  readonly logprobs?: boolean;
  readonly requestTimeoutMs?: number;
  /**
   * What a context-window overflow does: `end` (default) ends the episode with
   * `context_overflow`; `drop_oldest` replaces the oldest tool observations with a short
   * note, one more per retry, until the request fits (the recorded request shows it).
   */
  readonly contextPolicy?: ContextPolicy;
}

/** What a context-window overflow does. */
export type ContextPolicy = 'end' | 'drop_oldest';

/** The note an observation dropped to fit the context window is replaced with. */
export const DROPPED_OBSERVATION = '[observation dropped to fit the context window]';

/**
 * Any OpenAI-compatible chat endpoint with tool calling, through the official client.
 * Every step records the exact request body (no key), usage and, where returned, the
 * top-5 logprobs. Retries: bounded exponential backoff on 429, 5xx and network errors;
 * after the last attempt the episode ends with `error` / `model_error`.
 * Context policy: an HTTP 400 saying the context is too long ends the episode with
 * `end_reason: context_overflow`, or with `contextPolicy: 'drop_oldest'` the oldest tool
 * observations are replaced by a note until it fits; either way the recorded request is
 * exactly what the model saw.
 */
export class OpenAiAgent implements Agent {
  readonly kind = 'openai' as const;
  readonly needs = NEEDS_NOTHING;
  private readonly client: OpenAI;
  private logprobs: boolean;
  private readonly baseUrl: string;

  constructor(
    readonly spec: string,
    private readonly options: OpenAiAgentOptions,
  ) {
    this.baseUrl = options.baseUrl ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
    this.client = new OpenAI({
      apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'sk-none',
      baseURL: this.baseUrl,
      maxRetries: 0,
      timeout: options.requestTimeoutMs ?? 300_000,
    });
    this.logprobs = options.logprobs ?? true;
  }

  async decide(input: DecideInput): Promise<Decision> {
    const maxAttempts = this.options.maxAttempts ?? 4;
    const base = this.options.retryBaseMs ?? 500;
    let lastError = '';
    let dropped = 0;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const body = this.body(input, dropped);
      const started = Date.now();
      try {
        const response = await this.client.chat.completions.create(
          body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
          { signal: input.signal },
        );
        const choice = response.choices?.[0];
        if (!choice) throw new AgentFailure('model_error', `${this.baseUrl} returned no choices`);
        const m = choice.message;
        const message: Decision['message'] = { content: m.content ?? null };
        if (m.tool_calls && m.tool_calls.length > 0) message.tool_calls = m.tool_calls;
        return {
          raw: rawOf(message),
          message,
          request: body,
          usage: response.usage ?? null,
          logprobs: choice.logprobs ?? undefined,
          latencyMs: Date.now() - started,
          response: {
            ...(typeof response.id === 'string' ? { id: response.id } : {}),
            ...(typeof response.model === 'string' ? { model: response.model } : {}),
            finish_reasons: response.choices
              .map((c) => c.finish_reason)
              .filter((r): r is NonNullable<typeof r> => typeof r === 'string'),
          },
        };
      } catch (e) {
        if (e instanceof AgentFailure) throw e;
        if (e instanceof APIUserAbortError)
          throw new AgentFailure('stopped', 'the model request was cancelled');
        const status = e instanceof APIError ? e.status : undefined;
        const message = e instanceof Error ? e.message : String(e);
        if (status === 400 && this.logprobs && /logprob/i.test(message)) {
          log.info(`${this.baseUrl} refuses logprobs; asking without them`);
          this.logprobs = false;
          attempt -= 1;
          continue;
        }
        if (isContextOverflow(e)) {
          if (this.options.contextPolicy === 'drop_oldest' && dropped < observationCount(input.messages)) {
            dropped += 1;
            log.warn(`context overflow: dropping the oldest ${dropped} observation(s) and asking again`);
            attempt -= 1;
            continue;
          }
          throw new AgentFailure(
            'context_overflow',
            `the conversation no longer fits the model's context window (${message}); shorten the task or raise the model's context length`,
          );
        }
        const retryable =
          e instanceof APIConnectionError || status === 429 || (status !== undefined && status >= 500);
        lastError = status ? `HTTP ${status}: ${message}` : message;
        if (!retryable) break;
        if (attempt < maxAttempts) {
          const delay = base * 2 ** (attempt - 1);
          log.warn(`request failed (${lastError}); retry ${attempt}/${maxAttempts - 1} in ${delay} ms`);
          await sleep(delay, input.signal);
        }
      }
    }
    // Said where every front end sets the address (the window has no base-URL field; the CLI's
    // --agent takes the same spec), not as a flag of one of them.
    throw modelEndpointFailure(
      this.baseUrl,
      lastError,
      `the server is up (its address comes after @ in the agent, ${OPENAI_SPEC}, or from OPENAI_BASE_URL) and the model name`,
    );
  }

  /** The request body sent for a step; exactly what is recorded. */
  private body(input: DecideInput, dropped: number): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: this.options.model,
      messages: dropped > 0 ? dropObservations(input.messages, dropped) : input.messages,
    };
    if (input.tools.length > 0) {
      body.tools = input.tools;
      body.tool_choice = 'auto';
    }
    if (this.options.temperature !== undefined) body.temperature = this.options.temperature;
    if (this.options.seed !== undefined) body.seed = this.options.seed;
    if (this.logprobs) {
      body.logprobs = true;
      body.top_logprobs = 5;
    }
    return body;
  }

  describe(): Record<string, unknown> {
    return {
      model: this.options.model,
      base_url: withoutCredentials(this.baseUrl),
      temperature: this.options.temperature ?? null,
      seed: this.options.seed ?? null,
      context_policy: this.options.contextPolicy ?? 'end',
    };
  }
}

/** A URL as it may be recorded: any `user:password@` removed (secrets never enter a trace). */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url;
  }
}

/** How many tool observations a conversation holds. */
function observationCount(messages: readonly ChatMessage[]): number {
  return messages.filter((m) => m.role === 'tool').length;
}

/** The messages with the content of the oldest `n` tool observations replaced by a note. */
export function dropObservations(messages: readonly ChatMessage[], n: number): ChatMessage[] {
  let left = n;
  return messages.map((m) => {
    if (m.role !== 'tool' || left === 0) return m;
    left -= 1;
    return { ...m, content: DROPPED_OBSERVATION };
  });
}

/** True for an HTTP 400 that says the prompt exceeds the context window. */
export function isContextOverflow(e: unknown): boolean {
  if (!(e instanceof APIError) || e.status !== 400) return false;
  const text = `${e.code ?? ''} ${e.message}`;
  return /context_length_exceeded|context length|context window|maximum context|too many tokens/i.test(text);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
