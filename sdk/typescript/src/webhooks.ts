// Webhook deliveries: verify Npcworld-Signature (HMAC-SHA256 over "<timestamp>.<raw body>", hex, in
// `t=<unix seconds>,v1=<hex>`, keyed by the subscription's whsec_ secret), then parse. Web Crypto only.
import { NpcworldError } from "./errors.js";
import type { Envelope } from "./sse.js";

export const SIGNATURE_HEADER = "Npcworld-Signature";

export class WebhookSignatureError extends NpcworldError {
  override name = "WebhookSignatureError";
}

/** A verified delivery: the event's id, `seq` and type, and its stored envelope. */
export interface WebhookDelivery {
  event_id: string;
  delivery_id: number;
  seq: number;
  type: string;
  world_id: string;
  event: Envelope;
}

async function hmacHex(secret: string, message: Uint8Array<ArrayBuffer>): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"],
  );
  const digest = new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

function signed(timestamp: number, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = new TextEncoder().encode(`${timestamp}.`);
  const message = new Uint8Array(prefix.length + body.length);
  message.set(prefix);
  message.set(body, prefix.length);
  return message;
}

function bytes(body: Uint8Array | string): Uint8Array {
  return typeof body === "string" ? new TextEncoder().encode(body) : body;
}

/** The Npcworld-Signature value for `body` (what the server sends; handy in a receiver's tests). */
export async function signWebhook(secret: string, body: Uint8Array | string, timestamp?: number): Promise<string> {
  const stamp = timestamp ?? Math.floor(Date.now() / 1000);
  return `t=${stamp},v1=${await hmacHex(secret, signed(stamp, bytes(body)))}`;
}

/** Throws WebhookSignatureError unless `header` signs the raw `body` with `secret`, recently. */
export async function verifyWebhook(
  secret: string,
  header: string | null | undefined,
  body: Uint8Array | string,
  options: { toleranceSeconds?: number; now?: number } = {},
): Promise<void> {
  if (!header) throw new WebhookSignatureError(`no ${SIGNATURE_HEADER} header`);
  const parts = new Map<string, string>();
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq > 0) parts.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const stamp = Number(parts.get("t"));
  if (!Number.isInteger(stamp)) throw new WebhookSignatureError("the signature has no timestamp");
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.now ?? Date.now() / 1000;
  if (Math.abs(now - stamp) > tolerance) {
    throw new WebhookSignatureError(`the signature's timestamp is more than ${tolerance} s from now`);
  }
  const expected = await hmacHex(secret, signed(stamp, bytes(body)));
  const given = parts.get("v1") ?? "";
  let diff = expected.length ^ given.length;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ given.charCodeAt(i % (given.length || 1));
  if (diff !== 0) throw new WebhookSignatureError("the signature does not match the body");
}

/** Verify a delivery (headers as received) and return it parsed. */
export async function parseWebhook(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  body: Uint8Array | string,
  options: { toleranceSeconds?: number } = {},
): Promise<WebhookDelivery> {
  await verifyWebhook(secret, headerValue(headers, SIGNATURE_HEADER), body, options);
  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  return JSON.parse(text) as WebhookDelivery;
}

function headerValue(
  headers: Headers | Record<string, string | string[] | undefined>, name: string,
): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const found = Object.entries(headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  return Array.isArray(found) ? found[0] : found;
}
