import { chatFromGeminiResponse, geminiRequestFromChat } from '../model-api/gemini-api.js';
import { logger } from '../log.js';
import { AgentFailure, type Agent, type DecideInput, type Decision } from './agent.js';
import { withoutCredentials } from './openai-agent.js';
import { rawOf } from './scripted-agent.js';

const log = logger('gemini');

/** Settings of a Gemini API model source. The key is read here and never recorded. */
export interface GeminiAgentOptions {
  readonly model: string;
  /** e.g. https://generativelanguage.googleapis.com (the client appends /v1beta/models/M:generateContent). */
  readonly baseUrl?: string;
  /** Defaults to GEMINI_API_KEY on the host. */
  readonly apiKey?: string;
  readonly temperature?: number;
  /** Attempts per request, the first included (429, 5xx and network errors are retried). */
  readonly maxAttempts?: number;
  /** First backoff delay; doubles per retry. */
  readonly retryBaseMs?: number;
}

/**
 * A Gemini API endpoint (`gemini:MODEL[@BASE_URL]`): the conversation is sent as a
 * generateContent request (gemini-api.ts), the answer comes back as a Chat assistant
 * message, so it answers an agent speaking any of the endpoint's APIs. The key
 * (`x-goog-api-key`, from GEMINI_API_KEY) is never part of the recorded request.
 */
export class GeminiAgent implements Agent {
  readonly kind = 'gemini' as const;
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
    const maxAttempts = this.options.maxAttempts ?? 4;
    const base = this.options.retryBaseMs ?? 500;
    let lastError = '';
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const started = Date.now();
      let status: number | undefined;
      try {
        const res = await fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key !== '' ? { 'x-goog-api-key': key } : {}) },
          body: JSON.stringify(body),
          signal: input.signal,
        });
        status = res.status;
        const text = await res.text();
        if (!res.ok) throw new Error(`HTTP ${res.status}: ${errorMessage(text)}`);
        const response = JSON.parse(text) as Record<string, unknown>;
        const { message, usage } = chatFromGeminiResponse(response, `call_${input.step}`);
        const candidate = Array.isArray(response.candidates)
          ? (response.candidates[0] as { finishReason?: unknown } | undefined)
          : undefined;
        return {
          raw: rawOf(message),
          message,
          request: { model: this.options.model, ...body },
          usage,
          latencyMs: Date.now() - started,
          response: {
            ...(typeof response.responseId === 'string' ? { id: response.responseId } : {}),
            ...(typeof response.modelVersion === 'string' ? { model: response.modelVersion } : {}),
            ...(typeof candidate?.finishReason === 'string'
              ? { finish_reasons: [candidate.finishReason] }
              : {}),
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
      `the model endpoint ${this.baseUrl} failed: ${lastError}. Check the server is up, the model name and GEMINI_API_KEY`,
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

/** The message of a Google (or OpenAI) error body, else the text's start. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof body.error?.message === 'string') return body.error.message;
  } catch {
    // Not JSON: show its start.
  }
  return text.slice(0, 200);
}
