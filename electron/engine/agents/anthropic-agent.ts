import { anthropicRequestFromChat, chatFromAnthropicResponse } from '../model-api/anthropic-messages.js';
import { logger } from '../log.js';
import { NEEDS_NOTHING, type Agent, type DecideInput, type Decision } from './agent.js';
import { requestHostedModel, type HostedModelOptions } from './hosted-model-request.js';
import { withoutCredentials } from './openai-agent.js';
import { rawOf } from './scripted-agent.js';

const log = logger('anthropic');

/** The Messages API version stepbox speaks upstream. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Settings of an Anthropic-compatible model source (base URL e.g. https://api.anthropic.com:
 * the client appends /v1/messages; a URL ending in /v1 works too). The key is read here and never recorded.
 */
export interface AnthropicAgentOptions extends HostedModelOptions {
  /** `max_tokens` of each request (the API requires one). */
  readonly maxTokens?: number;
}

/**
 * An Anthropic Messages API endpoint (`anthropic:MODEL[@BASE_URL]`): the conversation is
 * sent as a Messages request (anthropic-messages.ts), the answer comes back as a Chat
 * assistant message, so it answers an agent speaking any of the endpoint's three APIs.
 * The key (`x-api-key`, from ANTHROPIC_API_KEY) is never part of the recorded request.
 */
export class AnthropicAgent implements Agent {
  readonly kind = 'anthropic' as const;
  readonly needs = NEEDS_NOTHING;
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
    return requestHostedModel(
      {
        url: this.url,
        headers: { 'anthropic-version': ANTHROPIC_VERSION, ...(key !== '' ? { 'x-api-key': key } : {}) },
        body,
        signal: input.signal,
        maxAttempts: this.options.maxAttempts,
        retryBaseMs: this.options.retryBaseMs,
        baseUrl: this.baseUrl,
        keyVariable: 'ANTHROPIC_API_KEY',
        log,
      },
      (response) => {
        const { message, usage } = chatFromAnthropicResponse(response);
        return {
          raw: rawOf(message),
          message,
          request: body,
          usage,
          response: {
            ...(typeof response.id === 'string' ? { id: response.id } : {}),
            ...(typeof response.model === 'string' ? { model: response.model } : {}),
            ...(typeof response.stop_reason === 'string' ? { finish_reasons: [response.stop_reason] } : {}),
          },
        };
      },
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
