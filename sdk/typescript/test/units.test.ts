// The SDK's own logic, without a server: SSE parsing, retry waits, webhook signatures, typed errors, and
// the public type declarations.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";
import {
  ConflictError,
  RetryPolicy,
  SSEParser,
  ServerError,
  UnprocessableEntityError,
  WebhookSignatureError,
  errorFromResponse,
  parseWebhook,
  signWebhook,
  verifyWebhook,
} from "npcworld-sdk";

test("the SSE parser yields an event at its blank line and skips comments and retry hints", () => {
  const parser = new SSEParser();
  const fed = ["retry: 1000", "", ": keepalive", "id: 7", "event: NpcReplied", 'data: {"type":"NpcReplied",', 'data: "payload":{}}']
    .map((line) => parser.feed(line));
  assert.deepEqual(fed, [null, null, null, null, null, null, null]);
  const event = parser.feed("");
  assert.equal(event?.seq, 7);
  assert.equal(event?.type, "NpcReplied");
  assert.deepEqual(event?.envelope.payload, {});
  assert.equal(parser.lastId, "7");
});

test("retries wait as Retry-After says, else back off doubling, and give up after the attempts", () => {
  const policy = new RetryPolicy({ attempts: 3, baseDelay: 0.5, maxDelay: 0.8 }, () => 1);
  assert.equal(policy.delay(0, "2"), 2);
  assert.equal(policy.delay(0), 0.5);
  assert.equal(policy.delay(1), 0.8);
  assert.equal(policy.delay(2), null);
  assert.equal(new RetryPolicy({ maxRetryAfter: 5 }).delay(0, "120"), null);
  assert.ok(policy.retriesAnswer(429, "", 0) && policy.retriesAnswer(503, "", 0));
  assert.ok(!policy.retriesAnswer(409, "a request with this Idempotency-Key is still in progress", 0));
  assert.ok(policy.retriesAnswer(409, "a request with this Idempotency-Key is still in progress", 1));
  assert.ok(!policy.retriesAnswer(422, "", 1));
});

test("a webhook signature is the server's HMAC-SHA256 over timestamp.body, and forgeries are refused", async () => {
  const body = '{"event_id":"e1","delivery_id":4,"seq":9,"type":"WorldTicked","world_id":"w","event":{}}';
  const header = await signWebhook("whsec_test", body, 1_700_000_000);
  const expected = createHmac("sha256", "whsec_test").update(`1700000000.${body}`).digest("hex");
  assert.equal(header, `t=1700000000,v1=${expected}`);
  await verifyWebhook("whsec_test", header, body, { now: 1_700_000_100 });
  const delivery = await parseWebhook("whsec_test", { "npcworld-signature": await signWebhook("whsec_test", body) }, body);
  assert.equal(delivery.seq, 9);
  const refused = [
    () => verifyWebhook("whsec_other", header, body, { now: 1_700_000_100 }),
    () => verifyWebhook("whsec_test", header, body.replace("e1", "e2"), { now: 1_700_000_100 }),
    () => verifyWebhook("whsec_test", header, body, { now: 1_700_000_000 + 301 }),
    () => verifyWebhook("whsec_test", undefined, body),
  ];
  for (const attempt of refused) await assert.rejects(attempt, WebhookSignatureError);
});

test("error answers become the class of their status with the problem's fields", () => {
  const problem = JSON.stringify({ type: "about:blank", title: "Unprocessable", status: 422, detail: "bad",
    errors: [{ field: "name", message: "must not be blank" }] });
  const invalid = errorFromResponse(422, "", new Headers(), problem);
  assert.ok(invalid instanceof UnprocessableEntityError);
  assert.deepEqual(invalid.fields, ["name"]);
  assert.ok(errorFromResponse(409, "", new Headers(), problem) instanceof ConflictError);
  const gateway = errorFromResponse(502, "Bad Gateway", new Headers({ "retry-after": "3" }), "<html>");
  assert.ok(gateway instanceof ServerError);
  assert.equal(gateway.title, "Bad Gateway");
  assert.equal(gateway.retryAfter, 3);
});

test("the public type declarations have no any", () => {
  const dist = new URL("../../../dist/", import.meta.url);
  for (const name of readdirSync(dist).filter((n) => n.endsWith(".d.ts"))) {
    const code = readFileSync(new URL(name, dist), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
    assert.doesNotMatch(code, /\bany\b/, `${name} declares any`);
  }
});
