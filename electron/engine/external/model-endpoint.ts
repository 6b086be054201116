import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { ChatMessage } from '../agents/agent.js';
import { logger } from '../log.js';
import {
  AnthropicRequest,
  ChatRequest,
  chatMessages,
  chatTools,
  GeminiRequest,
  parseRequest,
  ResponsesRequest,
  type RequestProblem,
} from '../model-api/model-requests.js';
import { apiError, listenLocal, readBody, sendJson, type LocalServer } from '../model-api/local-http.js';
import type { AssistantAnswer } from '../model-api/assistant-answer.js';
import { chatFromResponsesRequest, sendResponsesAnswer } from '../model-api/responses-api.js';
import { sendChatAnswer } from '../model-api/chat-completions.js';
import {
  anthropicError,
  chatFromAnthropicRequest,
  estimateTokens,
  sendAnthropicAnswer,
  toolResultProblem,
} from '../model-api/anthropic-messages.js';
import {
  chatFromGeminiRequest,
  estimateGeminiTokens,
  geminiError,
  geminiRoute,
  sendGeminiAnswer,
  type GeminiStream,
} from '../model-api/gemini-api.js';

export type { AssistantAnswer } from '../model-api/assistant-answer.js';

const log = logger('model-endpoint');

/** The largest model request accepted (a long conversation fits; a flood does not). */
export const MODEL_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * How often one answer is sent again to identical requests (SDKs retry a dropped connection
 * twice by default); after that an identical request is a new model call, so an agent that
 * repeats itself still makes steps (and meets max_steps) rather than looping unseen.
 */
export const MAX_RESENDS = 2;

/** The APIs the endpoint speaks: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, Gemini. */
export type ModelApi = 'chat.completions' | 'responses' | 'anthropic.messages' | 'gemini';

/** One model call of the agent, waiting for its answer. */
export interface ModelCall {
  /** Which API the agent used. */
  readonly api: ModelApi;
  /** The request as Chat Completions (`messages`, `tools`, …); a Responses, Messages or Gemini request converted. */
  readonly body: ChatRequest;
  /** Its conversation as the agent's decision sees it (content as text). */
  readonly messages: readonly ChatMessage[];
  /** The function tools it offers. */
  readonly tools: readonly OpenAiTool[];
  /** The request exactly as received (differs from `body` for the Responses and Messages APIs). */
  readonly raw: Record<string, unknown>;
  /** When the request arrived (performance.now()), for the bench. */
  readonly receivedAt: number;
  answer(message: AssistantAnswer, usage?: unknown): void;
  fail(status: number, code: string, message: string): void;
}

/** Which API a path asks for, or null: `/v1/…` or without `/v1`, and `/v1/v1/…` (an Anthropic client given the `/v1` URL); Gemini's `/v1beta/models/M:method`. */
export function apiOfPath(path: string): ModelApi | 'anthropic.count_tokens' | 'gemini.count_tokens' | null {
  const gemini = geminiRoute(path);
  if (gemini) return gemini.method === 'countTokens' ? 'gemini.count_tokens' : 'gemini';
  const p = path.replace(/^\/v1\/v1\//, '/v1/').replace(/^\/v1\//, '/');
  if (p === '/chat/completions') return 'chat.completions';
  if (p === '/responses') return 'responses';
  if (p === '/messages') return 'anthropic.messages';
  if (p === '/messages/count_tokens') return 'anthropic.count_tokens';
  return null;
}

/**
 * The episode's model endpoint: OpenAI Chat Completions (streaming or not, tool calls),
 * the Responses API subset the agent SDKs use, the Anthropic Messages API (`POST
 * /v1/messages`, `/v1/messages/count_tokens`; Anthropic clients take the URL without
 * `/v1`, {@link ModelEndpoint.anthropicUrl}) and `GET /v1/models`, on 127.0.0.1
 * behind the episode token (`Authorization: Bearer` or `x-api-key`). Calls queue until the exec agent takes them; after
 * `close(reason)` every call is answered with a clear `episode_ended` error.
 */
export class ModelEndpoint {
  private server: LocalServer | null = null;
  private readonly queue: ModelCall[] = [];
  private waiters: ((c: ModelCall) => void)[] = [];
  private ended: string | null = null;
  private seq = 0;
  /** The last answer sent, to send again to an identical request (see {@link MAX_RESENDS}). */
  private last: { key: string; call: ModelCall; send: (res: ServerResponse) => void; resent: number } | null =
    null;

  constructor(
    private readonly token: string,
    /** The model name the endpoint lists and answers as. */
    readonly model: string,
    /** Told when an answer was sent again to an identical request (the agent records a warning). */
    private readonly onResent?: (answered: ModelCall, times: number) => void,
  ) {}

  /** Starts listening; returns the base URL (`http://127.0.0.1:PORT/v1`). */
  async start(): Promise<string> {
    this.server = await listenLocal(this.token, (req, res) => this.handle(req, res), log);
    return `http://127.0.0.1:${this.server.port}/v1`;
  }

  /** Answers requests addressed to loopback `port` too: the agent's relay listens there (see bridge.py). */
  answerAs(port: number): void {
    this.server?.answerAs(port);
  }

  /** The base URL for Anthropic and Gemini clients (`ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`, no `/v1`: they append their own path). */
  get anthropicUrl(): string {
    if (!this.server) throw new Error('the model endpoint is not started');
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** The next model call (queued or future); rejects when `signal` aborts. */
  next(signal?: AbortSignal): Promise<ModelCall> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const waiter = (c: ModelCall) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(c);
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(signal?.reason ?? new Error('aborted'));
      };
      this.waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Answers every waiting and later call with `episode_ended` (status 409) naming `reason`. */
  end(reason: string): void {
    this.ended = reason;
    for (const c of this.queue.splice(0)) this.refuse(c);
  }

  async close(): Promise<void> {
    this.end(this.ended ?? 'closed');
    await this.server?.close();
    this.server = null;
  }

  private refuse(call: ModelCall): void {
    call.fail(
      409,
      'episode_ended',
      `stepbox: the episode has ended (${this.ended}); no more model calls are answered — exit now`,
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [path, query = ''] = (req.url ?? '').split('?');
    if (req.method === 'GET' && /^\/(v1beta|v1alpha)\/models$/.test(path)) {
      // Gemini's list: the one model served.
      sendJson(res, 200, {
        models: [
          {
            name: `models/${this.model}`,
            displayName: this.model,
            supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
          },
        ],
      });
      return;
    }
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      // OpenAI's list and Anthropic's page in one body: each client reads its own fields.
      sendJson(res, 200, {
        object: 'list',
        data: [
          {
            id: this.model,
            object: 'model',
            created: 0,
            owned_by: 'stepbox',
            type: 'model',
            display_name: this.model,
            created_at: '1970-01-01T00:00:00Z',
          },
        ],
        has_more: false,
        first_id: this.model,
        last_id: this.model,
      });
      return;
    }
    const api = req.method === 'POST' ? apiOfPath(path) : null;
    if (api === null) {
      apiError(
        res,
        404,
        'not_found',
        `${req.method} ${path} is not served; use POST /v1/chat/completions, POST /v1/responses, POST /v1/messages, POST /v1beta/models/MODEL:generateContent (or :streamGenerateContent, :countTokens) or GET /v1/models`,
      );
      return;
    }
    const refuse =
      api === 'anthropic.messages' || api === 'anthropic.count_tokens'
        ? anthropicError
        : api === 'gemini' || api === 'gemini.count_tokens'
          ? geminiError
          : apiError;
    const text = (await readBody(req, MODEL_BODY_LIMIT)).toString('utf8');
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      refuse(res, 400, 'invalid_json', 'the request body is not JSON');
      return;
    }
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      refuse(res, 400, 'invalid_request', 'the request body must be a JSON object');
      return;
    }
    // Everything below reads the request only as parsed against its API's schema
    // (model-requests.ts): the agent's code is not trusted, a misfit is that API's 400.
    const request: Record<string, unknown> = { ...raw };
    if (api === 'anthropic.count_tokens') {
      // Not a model call: an estimate the agent uses to budget its context.
      sendJson(res, 200, { input_tokens: estimateTokens(request) });
      return;
    }
    if (api === 'gemini.count_tokens') {
      sendJson(res, 200, { totalTokens: estimateGeminiTokens(request) });
      return;
    }
    const route = api === 'gemini' ? geminiRoute(path) : null;
    const converted = chatBodyOf(api, request, route?.model ?? this.model);
    if (!converted.ok) {
      refuse(res, 400, converted.problem.code, converted.problem.message);
      return;
    }
    const body = converted.request;
    const stream = request.stream === true;
    // Gemini says streaming in the method; `?alt=sse` picks events over the JSON-array stream.
    const geminiStream: GeminiStream =
      route?.method !== 'streamGenerateContent'
        ? 'none'
        : new URLSearchParams(query).get('alt') === 'sse'
          ? 'sse'
          : 'json-array';
    // A client whose connection dropped mid-answer (a cut stream) asks again with the very same
    // request, as every SDK does: it gets the same answer again, not the next model call, so
    // the answer is recorded once and no answer of the model's is spent on a retry.
    const key = `${api}\n${text}`;
    const last = this.last;
    if (last !== null && last.key === key && last.resent < MAX_RESENDS && this.ended === null) {
      last.resent += 1;
      log.info(`an identical ${api} request: the last answer sent again (${last.resent}×)`);
      last.send(res);
      this.onResent?.(last.call, last.resent);
      return;
    }
    this.last = null;
    const n = ++this.seq;
    const id = `stepbox-${n}`;
    let settled = false;
    const call: ModelCall = {
      api,
      body,
      messages: chatMessages(body),
      tools: chatTools(body),
      raw: request,
      receivedAt: performance.now(),
      answer: (message, usage) => {
        if (settled) return;
        settled = true;
        const send = (to: ServerResponse) => {
          const answer = { id, model: this.model, message, stream, usage, request };
          if (api === 'responses') sendResponsesAnswer(to, answer);
          else if (api === 'anthropic.messages') sendAnthropicAnswer(to, answer);
          else if (api === 'gemini') sendGeminiAnswer(to, { ...answer, stream: geminiStream });
          else sendChatAnswer(to, answer);
        };
        send(res);
        // Kept only while no other request came since this one (a newer call clears it).
        if (this.seq === n) this.last = { key, call, send, resent: 0 };
      },
      fail: (status, code, message) => {
        if (settled) return;
        settled = true;
        refuse(res, status, code, message);
      },
    };
    res.on('close', () => {
      settled = settled || res.writableFinished;
    });
    if (this.ended !== null) {
      this.refuse(call);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter(call);
    else this.queue.push(call);
  }
}

/**
 * A request of `api` parsed against its schema and, for the APIs the endpoint maps onto Chat
 * Completions, converted and parsed as Chat: the typed Chat request, or the problem to answer
 * 400 with (paths named as the agent's API names them).
 */
function chatBodyOf(
  api: ModelApi,
  request: Record<string, unknown>,
  model: string,
): { ok: true; request: ChatRequest } | { ok: false; problem: RequestProblem } {
  const converted = toChat(api, request, model);
  if (!converted.ok) return converted;
  const as = api === 'chat.completions' ? 'Chat Completions' : `Chat Completions (converted from ${api})`;
  return parseRequest(as, ChatRequest, converted.chat);
}

/** A request of `api` parsed against its own schema and converted to Chat's form. */
function toChat(
  api: ModelApi,
  request: Record<string, unknown>,
  model: string,
): { ok: true; chat: Record<string, unknown> } | { ok: false; problem: RequestProblem } {
  switch (api) {
    case 'chat.completions':
      return { ok: true, chat: request };
    case 'responses': {
      const r = parseRequest('OpenAI Responses', ResponsesRequest, request);
      return r.ok ? { ok: true, chat: chatFromResponsesRequest(r.request) } : r;
    }
    case 'anthropic.messages': {
      const r = parseRequest('Anthropic Messages', AnthropicRequest, request);
      if (!r.ok) return r;
      // The real Messages API refuses tool results that answer no tool call: so does the endpoint.
      const unmatched = toolResultProblem(r.request);
      if (unmatched !== null) return { ok: false, problem: { code: 'invalid_request', message: unmatched } };
      return { ok: true, chat: chatFromAnthropicRequest(r.request) };
    }
    case 'gemini': {
      const r = parseRequest('Gemini', GeminiRequest, request);
      return r.ok ? { ok: true, chat: chatFromGeminiRequest(r.request, model) } : r;
    }
  }
}
