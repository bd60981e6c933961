// TypeScript client of the npcworld REST API.
export { Client, type CallOptions, type ChatChunk, type EventFilter, type PageOptions } from "./client.js";
export * from "./errors.js";
export { RetryPolicy, type RetryOptions } from "./retry.js";
export { SSEParser, type Envelope, type StreamEvent } from "./sse.js";
export { EventStream, type ClientOptions } from "./transport.js";
export * from "./types.js";
export * from "./webhooks.js";
