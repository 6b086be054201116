import { anthropicRequestFromChat, chatFromAnthropicResponse } from '../model-api/anthropic-messages.js';
import { logger } from '../log.js';
import { AgentFailure, type Agent, type DecideInput, type Decision } from './agent.js';
import { withoutCredentials } from './openai-agent.js';
import { rawOf } from './scripted-agent.js';

const log = logger('anthropic');

/** The Messages API version stepbox speaks upstream. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Settings of an Anthropic-compatible model source. The key is read here and never recorded. */
export interface AnthropicAgentOptions {
  readonly model: string;
  /** e.g. https://api.anthropic.com (the client appends /v1/messages; a URL ending in /v1 works too). */
  readonly baseUrl?: string;
  /** Defaults to ANTHROPIC_API_KEY on the host. */
  readonly apiKey?: string;
  readonly temperature?: number;
  /** `max_tokens` of each request (the API requires one). */
  readonly maxTokens?: number;
  /** Attempts per request, the first included (429, 5xx and network errors are retried). */
  readonly maxAttempts?: number;
  /** First backoff delay; doubles per retry. */
  readonly retryBaseMs?: number;
}

/**
 * An Anthropic Messages API endpoint (`anthropic:MODEL[@BASE_URL]`): the conversation is
 * sent as a Messages request (anthropic-messages.ts), the answer comes back as a Chat
 * assistant message, so it answers an agent speaking any of the endpoint's three APIs.
 * The key (`x-api-key`, from ANTHROPIC_API_KEY) is never part of the recorded request.
 */
export class AnthropicAgent implements Agent {
  readonly kind = 'anthropic' as const;
  private readonly baseUrl: string;

  constructor(
    readonly spec: string,
    private readonly options: AnthropicAgentOptions,
  ) {
    this.baseUrl = (options.baseUrl ?? 'https://api.anthropic.com').replace(/\/+$/, '');
  }

  /** The messages URL: `BASE/v1/messages`, or `BASE/messages` when the base already ends in /v1. */
  private get url(): string {
    return /\/v1$/.test(this.baseUrl) ? `${this.baseUrl}/messages` : `${this.baseUrl}/v1/messages`;
  }

  async decide(input: DecideInput): Promise<Decision> {
    const body: Record<string, unknown> = {
      model: this.options.model,
      max_tokens: this.options.maxTokens ?? 8192,
      ...anthropicRequestFromChat(input.messages, input.tools),
      ...(this.options.temperature !== undefined ? { temperature: this.options.temperature } : {}),
    };
    const key = this.options.apiKey ?? process.env.ANTHROPIC_API_KEY ?? '';
    const maxAttempts = this.options.maxAttempts ?? 4;
    const base = this.options.retryBaseMs ?? 500;
    let lastError = '';
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const started = Date.now();
      let status: number | undefined;
      try {
        const res = await fetch(this.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'anthropic-version': ANTHROPIC_VERSION,
            ...(key !== '' ? { 'x-api-key': key } : {}),
          },
          body: JSON.stringify(body),
          signal: input.signal,
        });
        status = res.status;
        const text = await res.text();
        if (!res.ok) throw new Error(`HTTP ${res.status}: ${errorMessage(text)}`);
        const response = JSON.parse(text) as Record<string, unknown>;
        const { message, usage } = chatFromAnthropicResponse(response);
        return {
          raw: rawOf(message),
          message,
          request: body,
          usage,
          latencyMs: Date.now() - started,
          response: {
            ...(typeof response.id === 'string' ? { id: response.id } : {}),
            ...(typeof response.model === 'string' ? { model: response.model } : {}),
            ...(typeof response.stop_reason === 'string' ? { finish_reasons: [response.stop_reason] } : {}),
          },
        };
      } catch (e) {
        if (input.signal?.aborted) throw new AgentFailure('stopped', 'the model request was cancelled');
        lastError = (e as Error).message;
        const retryable = status === undefined || status === 429 || status >= 500;
        if (!retryable) break;
        if (attempt < maxAttempts) {
          const delay = base * 2 ** (attempt - 1);
          log.warn(`request failed (${lastError}); retry ${attempt}/${maxAttempts - 1} in ${delay} ms`);
          await new Promise((r) => setTimeout(r, delay));
        }
      }
    }
    throw new AgentFailure(
      'model_error',
      `the model endpoint ${this.baseUrl} failed: ${lastError}. Check the server is up, the model name and ANTHROPIC_API_KEY`,
    );
  }

  describe(): Record<string, unknown> {
    return {
      model: this.options.model,
      base_url: withoutCredentials(this.baseUrl),
      temperature: this.options.temperature ?? null,
    };
  }
}

/** The message of an Anthropic (or OpenAI) error body, else the text's start. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof body.error?.message === 'string') return body.error.message;
  } catch {
    // Not JSON: show its start.
  }
  return text.slice(0, 200);
}
