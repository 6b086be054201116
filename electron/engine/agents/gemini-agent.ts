import { chatFromGeminiResponse, geminiRequestFromChat } from '../model-api/gemini-api.js';
import { logger } from '../log.js';
import { NEEDS_NOTHING, type Agent, type DecideInput, type Decision } from './agent.js';
import { requestHostedModel, type HostedModelOptions } from './hosted-model-request.js';
import { withoutCredentials } from './openai-agent.js';
import { rawOf } from './scripted-agent.js';

const log = logger('gemini');

/**
 * Settings of a Gemini API model source (base URL e.g. https://generativelanguage.googleapis.com:
 * the client appends /v1beta/models/M:generateContent). The key is read here and never recorded.
 */
export type GeminiAgentOptions = HostedModelOptions;

/**
 * A Gemini API endpoint (`gemini:MODEL[@BASE_URL]`): the conversation is sent as a
 * generateContent request (gemini-api.ts), the answer comes back as a Chat assistant
 * message, so it answers an agent speaking any of the endpoint's APIs. The key
 * (`x-goog-api-key`, from GEMINI_API_KEY) is never part of the recorded request.
 */
export class GeminiAgent implements Agent {
  readonly kind = 'gemini' as const;
  readonly needs = NEEDS_NOTHING;
  private readonly baseUrl: string;

  constructor(
    readonly spec: string,
    private readonly options: GeminiAgentOptions,
  ) {
    this.baseUrl = (options.baseUrl ?? 'https://generativelanguage.googleapis.com').replace(/\/+$/, '');
  }

  /** `BASE/v1beta/models/MODEL:generateContent`, or `BASE/models/…` when the base already names a version. */
  private get url(): string {
    const model = encodeURIComponent(this.options.model);
    const root = /\/v1(beta|alpha)?$/.test(this.baseUrl) ? this.baseUrl : `${this.baseUrl}/v1beta`;
    return `${root}/models/${model}:generateContent`;
  }

  async decide(input: DecideInput): Promise<Decision> {
    const body: Record<string, unknown> = {
      ...geminiRequestFromChat(input.messages, input.tools),
      ...(this.options.temperature !== undefined
        ? { generationConfig: { temperature: this.options.temperature } }
        : {}),
    };
    const key = this.options.apiKey ?? process.env.GEMINI_API_KEY ?? '';
    return requestHostedModel(
      {
        url: this.url,
        headers: key !== '' ? { 'x-goog-api-key': key } : {},
        body,
        signal: input.signal,
        maxAttempts: this.options.maxAttempts,
        retryBaseMs: this.options.retryBaseMs,
        baseUrl: this.baseUrl,
        keyVariable: 'GEMINI_API_KEY',
        log,
      },
      (response) => {
        const { message, usage } = chatFromGeminiResponse(response, `call_${input.step}`);
        const candidate = Array.isArray(response.candidates)
          ? (response.candidates[0] as { finishReason?: unknown } | undefined)
          : undefined;
        return {
          raw: rawOf(message),
          message,
          request: { model: this.options.model, ...body },
          usage,
          response: {
            ...(typeof response.responseId === 'string' ? { id: response.responseId } : {}),
            ...(typeof response.modelVersion === 'string' ? { model: response.modelVersion } : {}),
            ...(typeof candidate?.finishReason === 'string'
              ? { finish_reasons: [candidate.finishReason] }
              : {}),
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
