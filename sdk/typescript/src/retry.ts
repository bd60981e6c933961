// When a call is tried again: on 429 and 503 (after Retry-After when the server sends it), on a lost
// connection, and on a 409 saying the first try of the same Idempotency-Key is still running.
import { retryAfterSeconds } from "./errors.js";

export interface RetryOptions {
  /** Tries in all (default 4). */
  attempts?: number;
  /** First backoff in seconds (default 0.25), doubling up to `maxDelay` (default 8), jittered. */
  baseDelay?: number;
  maxDelay?: number;
  /** A longer Retry-After than this (default 60 s) gives up instead of waiting. */
  maxRetryAfter?: number;
}

export class RetryPolicy {
  readonly attempts: number;
  readonly baseDelay: number;
  readonly maxDelay: number;
  readonly maxRetryAfter: number;

  constructor(options: RetryOptions = {}, private readonly jitter: () => number = Math.random) {
    this.attempts = options.attempts ?? 4;
    this.baseDelay = options.baseDelay ?? 0.25;
    this.maxDelay = options.maxDelay ?? 8;
    this.maxRetryAfter = options.maxRetryAfter ?? 60;
  }

  /** Seconds to wait before try `attempt + 1` (`attempt` counts from 0), or null to give up. */
  delay(attempt: number, retryAfter: string | null = null): number | null {
    if (attempt + 1 >= this.attempts) return null;
    const asked = retryAfterSeconds(retryAfter);
    if (asked !== null) return asked <= this.maxRetryAfter ? asked : null;
    const backoff = Math.min(this.maxDelay, this.baseDelay * 2 ** attempt);
    return backoff * (0.5 + this.jitter() / 2);
  }

  /** Whether an error answer is worth another try of the same request. */
  retriesAnswer(status: number, body: string, attempt: number): boolean {
    if (status === 429 || status === 503) return true;
    // A retry that overtook its own first try (sent, then the connection lost): wait for the first one.
    return attempt > 0 && status === 409 && body.includes("still in progress");
  }

  /** Whether a call that got no answer may be sent again (PATCH is not repeated: it has no key). */
  retriesFailure(method: string): boolean {
    return method !== "PATCH";
  }
}

export const sleep = (seconds: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, seconds * 1000));
