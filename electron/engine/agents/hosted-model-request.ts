import type { Logger } from '../log.js';
import { AgentFailure, modelEndpointFailure, type Decision } from './agent.js';

/**
 * Settings of a hosted model source (anthropic:, gemini:) as its agent is built with them:
 * the model, the endpoint, the key (read from the host, never recorded), sampling and retries.
 */
export interface HostedModelOptions {
  readonly model: string;
  /** The API's base URL; the agent appends its own path (each names its default). */
  readonly baseUrl?: string;
  /** Defaults to the API's key variable on the host (ANTHROPIC_API_KEY, GEMINI_API_KEY). */
  readonly apiKey?: string;
  readonly temperature?: number;
  /** Attempts per request, the first included (429, 5xx and network errors are retried). */
  readonly maxAttempts?: number;
  /** First backoff delay; doubles per retry. */
  readonly retryBaseMs?: number;
}

/** One model request to a hosted HTTP API (Anthropic Messages, Gemini generateContent): what to send and how to retry. */
export interface HostedModelRequest {
  /** The endpoint the JSON body is POSTed to. */
  readonly url: string;
  /** Extra headers (the API key, a version); `content-type: application/json` is always sent. */
  readonly headers: Readonly<Record<string, string>>;
  /** The request body, sent as JSON. */
  readonly body: Record<string, unknown>;
  readonly signal?: AbortSignal;
  /** Attempts, the first included (429, 5xx and network errors are retried); default 4. */
  readonly maxAttempts?: number;
  /** First backoff delay; doubles per retry. Default 500 ms. */
  readonly retryBaseMs?: number;
  /** The base URL named in the final error. */
  readonly baseUrl: string;
  /** The host variable holding the key, named in the final error's fix (e.g. ANTHROPIC_API_KEY). */
  readonly keyVariable: string;
  readonly log: Logger;
}

/**
 * POSTs a hosted model request, retrying 429, 5xx and network errors with exponential
 * backoff, and turns the parsed JSON answer into a decision with `decode` (a throw there
 * is a non-retryable failure of that attempt). A cancelled request ends with `stopped`;
 * after the last attempt, or on any other refusal, with `model_error` naming the endpoint.
 * The OpenAI agent keeps its own loop: it goes through the official client and also
 * recovers from context overflow and refused logprobs, which these APIs do not need.
 */
export async function requestHostedModel(
  request: HostedModelRequest,
  decode: (response: Record<string, unknown>) => Omit<Decision, 'latencyMs'>,
): Promise<Decision> {
  const maxAttempts = request.maxAttempts ?? 4;
  const base = request.retryBaseMs ?? 500;
  let lastError = '';
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const started = Date.now();
    let status: number | undefined;
    try {
      const res = await fetch(request.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...request.headers },
        body: JSON.stringify(request.body),
        signal: request.signal,
      });
      status = res.status;
      const text = await res.text();
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${errorMessage(text)}`);
      const decision = decode(JSON.parse(text) as Record<string, unknown>);
      return { ...decision, latencyMs: Date.now() - started };
    } catch (e) {
      if (request.signal?.aborted) throw new AgentFailure('stopped', 'the model request was cancelled');
      lastError = (e as Error).message;
      const retryable = status === undefined || status === 429 || status >= 500;
      if (!retryable) break;
      if (attempt < maxAttempts) {
        const delay = base * 2 ** (attempt - 1);
        request.log.warn(`request failed (${lastError}); retry ${attempt}/${maxAttempts - 1} in ${delay} ms`);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }
  throw modelEndpointFailure(
    request.baseUrl,
    lastError,
    `the server is up, the model name and ${request.keyVariable}`,
  );
}

/** The message of an error body in the `{error: {message}}` shape (Anthropic, Google, OpenAI), else the text's start. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof body.error?.message === 'string') return body.error.message;
  } catch {
    // Not JSON: show its start.
  }
  return text.slice(0, 200);
}
