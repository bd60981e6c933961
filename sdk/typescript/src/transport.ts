// The client's transport: fetch with retries and backoff, one Idempotency-Key per POST kept across its
// retries, typed errors, cursor pages and the resumable event stream.
import { ApiConnectionError, ApiError, StreamError, errorFromResponse } from "./errors.js";
import { RetryPolicy, type RetryOptions, sleep } from "./retry.js";
import { SSEParser, type StreamEvent, lines } from "./sse.js";

export interface ClientOptions {
  /** Default: NPCWORLD_URL from the environment, else http://127.0.0.1:8000. */
  baseUrl?: string;
  /** An API key or a player session token. Default: NPCWORLD_API_KEY from the environment. */
  apiKey?: string;
  retry?: RetryOptions;
  /** Milliseconds a call may take (default 30 000; streams are not limited). */
  timeoutMs?: number;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

export type Query = Record<string, string | number | boolean | string[] | null | undefined>;

export interface Page<T> {
  items: T[];
  next_cursor?: string | null;
}

export interface RequestOptions {
  query?: Query;
  body?: object;
  idempotencyKey?: string;
  /** Milliseconds this call may take, instead of the client's (a call the server holds open needs more). */
  timeoutMs?: number;
}

function env(name: string): string | undefined {
  const holder = globalThis as { process?: { env?: Record<string, string | undefined> } };
  return holder.process?.env?.[name];
}

export function buildQuery(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === null || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, String(v));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** A path with each `{}` filled by a URL-encoded segment. */
export function path(template: string, ...segments: (string | number)[]): string {
  let i = 0;
  return template.replace(/\{\}/g, () => encodeURIComponent(String(segments[i++])));
}

/** A JSON body without the fields left out (undefined or null). */
export function compact<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

export class Transport {
  readonly baseUrl: string;
  readonly retry: RetryPolicy;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? env("NPCWORLD_URL") ?? "http://127.0.0.1:8000").replace(/\/+$/, "");
    const apiKey = options.apiKey ?? env("NPCWORLD_API_KEY");
    if (!apiKey) throw new Error("no API key: pass apiKey or set NPCWORLD_API_KEY");
    this.headers = { Authorization: `Bearer ${apiKey}` };
    this.retry = new RetryPolicy(options.retry);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Send one call, retrying as the policy allows; throws the ApiError subclass of a final error answer. */
  async request(method: string, url: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.headers, Accept: "application/json" };
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    if (method === "POST") headers["Idempotency-Key"] = options.idempotencyKey ?? `sdk-${crypto.randomUUID()}`;
    const target = `${this.baseUrl}${url}${buildQuery(options.query)}`;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        const signal = AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs);
        response = await this.fetchImpl(target, { method, headers, body, signal });
      } catch (error) {
        const wait = this.retry.retriesFailure(method) ? this.retry.delay(attempt) : null;
        if (wait === null) throw new ApiConnectionError(`${method} ${url}: ${String(error)}`, { cause: error });
        await sleep(wait);
        continue;
      }
      if (response.ok) return response;
      const text = await response.text();
      const wait = this.retry.retriesAnswer(response.status, text, attempt)
        ? this.retry.delay(attempt, response.headers.get("retry-after"))
        : null;
      if (wait === null) throw errorFromResponse(response.status, response.statusText, response.headers, text);
      await sleep(wait);
    }
  }

  async json<T>(method: string, url: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.request(method, url, options);
    return (await response.json()) as T;
  }

  /** Every item of a cursor-paged list, fetching the next page when the last is used up. */
  async *iterate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
    let cursor: string | undefined;
    for (;;) {
      const page = await fetchPage(cursor);
      yield* page.items;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  /** Opens the SSE connection, after `lastEventId` when given. */
  async openStream(url: string, query: Query, lastEventId: string | null, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { ...this.headers, Accept: "text/event-stream" };
    if (lastEventId !== null) headers["Last-Event-ID"] = lastEventId;
    const response = await this.fetchImpl(`${this.baseUrl}${url}${buildQuery(query)}`, { headers, signal });
    if (!response.ok) {
      const text = await response.text();
      throw errorFromResponse(response.status, response.statusText, response.headers, text);
    }
    return response;
  }
}

/**
 * A world's events as they are appended (SSE), resumed after the last one seen when the connection breaks.
 * `lastEventId` is the seq of the last event yielded: pass it to a later `streamEvents` to go on from there.
 */
export class EventStream implements AsyncIterable<StreamEvent> {
  lastEventId: string | null;
  private readonly abort = new AbortController();

  constructor(
    private readonly transport: Transport,
    private readonly url: string,
    private readonly query: Query,
    lastEventId: string | null,
  ) {
    this.lastEventId = lastEventId;
  }

  /** Stop reading (also what `break` in a `for await` does). */
  close(): void {
    this.abort.abort();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StreamEvent> {
    let failures = 0;
    try {
      while (!this.abort.signal.aborted) {
        try {
          for await (const event of this.readOnce()) {
            failures = 0;
            yield event;
          }
        } catch (error) {
          if (this.abort.signal.aborted) return;
          const retried = error instanceof ApiError ? error.status === 429 || error.status === 503 : true;
          if (error instanceof ApiError && !retried) throw error;
          const retryAfter = error instanceof ApiError ? error.headers.get("retry-after") : null;
          const wait = this.transport.retry.delay(failures++, retryAfter);
          if (wait === null) {
            throw new StreamError(`the event stream broke after id ${this.lastEventId}: ${String(error)}`, { cause: error });
          }
          await sleep(wait);
        }
      }
    } finally {
      this.close();
    }
  }

  private async *readOnce(): AsyncGenerator<StreamEvent> {
    const response = await this.transport.openStream(this.url, this.query, this.lastEventId, this.abort.signal);
    if (response.body === null) throw new Error("the event stream has no body");
    const parser = new SSEParser();
    for await (const line of lines(response.body)) {
      const event = parser.feed(line);
      if (event !== null) {
        this.lastEventId = String(event.seq);
        yield event;
      }
    }
    // The server ended the stream (a restart, a proxy's limit): connect again after the last id.
    throw new Error("the server closed the event stream");
  }
}
