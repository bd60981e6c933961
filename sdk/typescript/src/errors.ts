// Every error answer of the API is a problem+json; it is thrown as the class of its status.
import type { components } from "./schema.js";

export type Problem = components["schemas"]["Problem"];
export type ProblemField = components["schemas"]["ProblemField"];

/** Base of every error this SDK throws. */
export class NpcworldError extends Error {
  override name = "NpcworldError";
}

/** No answer from the gateway (connection refused, reset, timed out), after the retries allowed. */
export class ApiConnectionError extends NpcworldError {
  override name = "ApiConnectionError";
}

/** An event stream broke and could not be resumed within the retries allowed. */
export class StreamError extends NpcworldError {
  override name = "StreamError";
}

/** A chat's reply did not come in time; the chat stands and may be answered later. */
export class ReplyTimeoutError extends NpcworldError {
  override name = "ReplyTimeoutError";
}

/** An error answer: `problem` is its RFC 9457 body, `errors` name the offending fields. */
export class ApiError extends NpcworldError {
  override name = "ApiError";
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  readonly errors: ProblemField[];
  /** Seconds the server asked to wait (`Retry-After`), if it said. */
  readonly retryAfter: number | null;

  constructor(
    readonly problem: Problem,
    readonly headers: Headers,
  ) {
    super(`${problem.status} ${problem.title}: ${problem.detail}`);
    this.status = problem.status;
    this.type = problem.type;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.retryAfter = retryAfterSeconds(headers.get("retry-after"));
  }

  /** The offending fields' names. */
  get fields(): string[] {
    return this.errors.map((e) => e.field);
  }
}

/** 4xx: the request must change before it can succeed (429 excepted: wait and retry). */
export class ClientError extends ApiError { override name = "ClientError"; }
export class BadRequestError extends ClientError { override name = "BadRequestError"; }
export class AuthenticationError extends ClientError { override name = "AuthenticationError"; }
export class PermissionDeniedError extends ClientError { override name = "PermissionDeniedError"; }
export class NotFoundError extends ClientError { override name = "NotFoundError"; }
export class RequestTimeoutError extends ClientError { override name = "RequestTimeoutError"; }
export class ConflictError extends ClientError { override name = "ConflictError"; }
export class PayloadTooLargeError extends ClientError { override name = "PayloadTooLargeError"; }
export class UnprocessableEntityError extends ClientError { override name = "UnprocessableEntityError"; }
export class RateLimitError extends ClientError { override name = "RateLimitError"; }
export class HeadersTooLargeError extends ClientError { override name = "HeadersTooLargeError"; }
/** 5xx: the request may succeed later. */
export class ServerError extends ApiError { override name = "ServerError"; }
export class ServiceUnavailableError extends ServerError { override name = "ServiceUnavailableError"; }

const BY_STATUS: Record<number, new (problem: Problem, headers: Headers) => ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  408: RequestTimeoutError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
  431: HeadersTooLargeError,
  503: ServiceUnavailableError,
};

/** The typed error of an error answer whose body is `text` (a body that is not a problem still gives one). */
export function errorFromResponse(status: number, statusText: string, headers: Headers, text: string): ApiError {
  let problem: Problem;
  try {
    const parsed: unknown = JSON.parse(text);
    problem = isProblem(parsed) ? parsed : fallback();
  } catch {
    problem = fallback();
  }
  const Kind = BY_STATUS[status] ?? (status < 500 ? ClientError : ServerError);
  return new Kind(problem, headers);

  function fallback(): Problem {
    return { type: "about:blank", title: statusText || "Error", status, detail: text.slice(0, 500) };
  }
}

function isProblem(value: unknown): value is Problem {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.status === "number" && typeof v.title === "string" && typeof v.detail === "string";
}

/** `Retry-After` as seconds: a number of seconds or an HTTP date. */
export function retryAfterSeconds(value: string | null): number | null {
  if (value === null) return null;
  const seconds = Number(value);
  if (value.trim() !== "" && Number.isFinite(seconds)) return Math.max(0, seconds);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
}
