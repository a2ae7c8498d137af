/**
 * A fake OpenAI-compatible server on loopback for tests: POST /v1/chat/completions (and
 * /chat/completions). It records every request (method, path, headers, parsed body) so tests can
 * assert what the client sent, and answers with scripted replies in order: a JSON object, raw
 * content (e.g. malformed JSON), an HTTP error (429 with Retry-After, 500, ...), a refusal, or any
 * of these after a delay (longer than the client's timeout, to exercise timeouts). With no script
 * left it answers 500 with code `fake_openai_unscripted`, so a test that makes an unplanned call
 * fails visibly instead of hanging; `respond` can compute replies from the request instead.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeReply =
  /** A completion whose message content is `JSON.stringify(json)`. */
  | { json: unknown; delayMs?: number }
  /** A completion whose message content is this exact string (malformed JSON, fenced JSON, ...). */
  | { content: string; delayMs?: number }
  /** A completion whose message is a refusal (content null). */
  | { refusal: string; delayMs?: number }
  /** An error response in OpenAI's error shape. */
  | {
      status: number;
      message?: string;
      retryAfterSeconds?: number;
      retryAfterMs?: number;
      delayMs?: number;
    };

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body (undefined when it was not JSON). */
  readonly body: ChatCompletionBody | undefined;
  readonly rawBody: string;
  readonly receivedAt: number;
}

/** The parts of a chat-completions request tests look at; the rest stays reachable as unknown. */
export interface ChatCompletionBody {
  model?: string;
  messages?: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: unknown } };
  [key: string]: unknown;
}

export interface FakeOpenAi {
  /** Base URL including /v1, as OPENAI_BASE_URL expects it. */
  readonly baseUrl: string;
  readonly requests: readonly RecordedRequest[];
  /** Appends replies to the script; they are used in order, one per request. */
  enqueue(...replies: FakeReply[]): void;
  /** Replies still unused. */
  pending(): number;
  close(): Promise<void>;
}

export interface FakeOpenAiOptions {
  /** Computes a reply when the script is empty (e.g. by looking at the request's schema name). */
  respond?: (request: RecordedRequest) => FakeReply | undefined;
}

let completionCounter = 0;

function completion(model: string, content: string | null, refusal: string | null): unknown {
  completionCounter += 1;
  return {
    id: `chatcmpl-fake-${completionCounter}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  };
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
  const script: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    void (async () => {
      const rawBody = await readBody(req);
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/chat/completions')) {
        send(res, 404, {
          error: { message: `No route ${req.method} ${path}`, type: 'invalid_request_error' },
        });
        return;
      }
      let body: ChatCompletionBody | undefined;
      try {
        body = JSON.parse(rawBody) as ChatCompletionBody;
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = {
        method: req.method,
        path,
        headers: { ...req.headers },
        body,
        rawBody,
        receivedAt: Date.now(),
      };
      requests.push(recorded);
      const reply = script.shift() ?? options.respond?.(recorded);
      if (!reply) {
        send(res, 500, {
          error: {
            message: 'fake-openai: no scripted reply left',
            type: 'server_error',
            code: 'fake_openai_unscripted',
          },
        });
        return;
      }
      const answer = (): void => {
        const model = body?.model ?? 'fake-model';
        if ('status' in reply) {
          const headers: Record<string, string> = {};
          if (reply.retryAfterSeconds !== undefined) headers['retry-after'] = String(reply.retryAfterSeconds);
          if (reply.retryAfterMs !== undefined) headers['retry-after-ms'] = String(reply.retryAfterMs);
          send(
            res,
            reply.status,
            {
              error: {
                message: reply.message ?? `fake error ${reply.status}`,
                type: 'fake_error',
                code: null,
              },
            },
            headers,
          );
        } else if ('json' in reply) {
          send(res, 200, completion(model, JSON.stringify(reply.json), null));
        } else if ('content' in reply) {
          send(res, 200, completion(model, reply.content, null));
        } else {
          send(res, 200, completion(model, null, reply.refusal));
        }
      };
      if (reply.delayMs !== undefined && reply.delayMs > 0) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, reply.delayMs);
        timers.add(timer);
        // A client that gave up (timeout) closes the socket: drop the late answer.
        res.on('close', () => {
          clearTimeout(timer);
          timers.delete(timer);
        });
      } else {
        answer();
      }
    })().catch((err: unknown) => {
      send(res, 500, { error: { message: `fake-openai failure: ${String(err)}`, type: 'server_error' } });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => {
      script.push(...replies);
    },
    pending: () => script.length,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
