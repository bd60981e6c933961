// The TypeScript SDK against a live gateway (the Python suite starts it with the services behind it):
// every resource group, typed answers and errors, pages, the event stream resumed after a cut, a lost
// answer retried with its Idempotency-Key, rate limits, player sessions and signed webhooks.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { type IncomingHttpHeaders, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { promisify } from "node:util";
import {
  AuthenticationError,
  ConflictError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  WebhookSignatureError,
  parseWebhook,
} from "npcworld-sdk";
import { KEY, MORNING, T0, TOWN, URL_, client, eventually, newId, take, world } from "./support.js";

test("worlds and NPCs page by cursor, and errors arrive typed", async () => {
  const sdk = client();
  const worldId = await world(sdk, "ana", "ben", "cid");
  const page = await sdk.listNpcs(worldId, { limit: 2 });
  assert.deepEqual(page.items.map((n) => n.npc_id), ["ana", "ben"]);
  assert.ok(page.next_cursor);
  const all: string[] = [];
  for await (const npc of sdk.iterNpcs(worldId, 2)) all.push(npc.npc_id);
  assert.deepEqual(all, ["ana", "ben", "cid"]);
  assert.equal((await sdk.getWorld(worldId)).npc_count, 3);
  const fork = await sdk.forkWorld(worldId, { at: MORNING, new_world_id: newId("fork") });
  assert.equal(fork.forked_from, worldId);
  await assert.rejects(sdk.createWorld({ name: "Again", start_time: T0, world_id: worldId }), (e: unknown) =>
    e instanceof ConflictError && e.fields[0] === "world_id");
  await assert.rejects(sdk.createNpc(worldId, { npc_id: "dee", name: "  " }), (e: unknown) =>
    e instanceof UnprocessableEntityError && e.fields[0] === "name");
  await sdk.deleteWorld(worldId);
  await assert.rejects(sdk.getWorld(worldId), NotFoundError);
});

test("a player talks to an NPC of the demo town, and the chat's result is a resource", async () => {
  const sdk = client();
  const reply = await sdk.chat(TOWN, "marta", { player_id: "ts-1", text: "Good morning! What are you baking?" });
  assert.ok(reply.reply.length > 0);
  assert.equal(reply.provider, "offline");
  assert.deepEqual(await sdk.chatResult(TOWN, "marta", reply.event_id), reply);
  const sent = await sdk.sendChat(TOWN, "marta", { player_id: "ts-1", text: "See you later" });
  assert.equal(sent.status, "pending");
  const later = await sdk.waitForReply(TOWN, "marta", sent.event_id, { timeoutS: 30 });
  assert.equal(later.event_id, sent.event_id);
  const interview = await sdk.interview(TOWN, "marta", { interviewer: "a reporter", question: "Any news?" });
  assert.ok("reply" in interview);
  assert.ok(Array.isArray(await sdk.relationships(TOWN, "marta")));
  const thought = await sdk.innerVoice(TOWN, "marta", "You will bake a wedding cake");
  assert.match(thought.event_id, /\S/);
});

test("memories page and retrieval ranks them; an NPC without a plan is a 404", async () => {
  const sdk = client();
  const seeds: string[] = [];
  for await (const memory of sdk.iterMemories(TOWN, "marta", "seed")) seeds.push(memory.description);
  assert.ok(seeds.length > 0);
  const found = await sdk.retrieveMemories(TOWN, "marta", { query: "bread and baking", k: 3 });
  assert.ok(found.length > 0 && found[0]!.scores.total >= found[found.length - 1]!.scores.total);
  const worldId = await world(sdk, "ana");
  await assert.rejects(sdk.plan(worldId, "ana"), NotFoundError);
});

test("a chat's reply streams in chunks that add up to the reply, and resumes after a chunk", async () => {
  const sdk = client();
  const sent = await sdk.sendChat(TOWN, "marta", { player_id: "ts-stream", text: "What do you bake?" });
  const chunks: string[] = [];
  let reply: { reply: string } | undefined;
  for await (const part of sdk.streamChat(TOWN, "marta", sent.event_id)) {
    if (part.kind === "chunk") chunks.push(part.text);
    else reply = part;
  }
  assert.ok(reply !== undefined && chunks.length > 1);
  assert.equal(chunks.join(""), reply.reply);
  const rest: string[] = [];
  for await (const part of sdk.streamChat(TOWN, "marta", sent.event_id, { lastEventId: 1 })) {
    if (part.kind === "chunk") rest.push(part.text);
  }
  assert.deepEqual(rest, chunks.slice(1));
});

test("a designer edits a persona, corrects and forgets memories, and retires an NPC", async () => {
  const sdk = client();
  const worldId = newId("w");
  await sdk.createWorld({ name: "Brindle Hollow", start_time: T0, world_id: worldId });
  await sdk.createNpc(worldId, { npc_id: "ana", name: "Ana", occupation: "baker", seed: "Ana bakes bread; Ana sings" });
  const renamed = await sdk.updateNpc(worldId, "ana", { name: "Ana Varga", occupation: null });
  assert.equal(renamed.name, "Ana Varga");
  assert.equal(renamed.occupation, null);
  const seeds = await eventually(() => sdk.listMemories(worldId, "ana"), (p) => p.items.length === 2, 60);
  const [first, second] = seeds.items;
  await sdk.correctMemory(worldId, "ana", first!.memory_id, "Ana bakes rye bread on Sundays");
  await sdk.forgetMemory(worldId, "ana", second!.memory_id);
  const after = await eventually(() => sdk.listMemories(worldId, "ana"), (p) => p.items.length === 1, 60);
  assert.deepEqual(after.items.map((m) => m.description), ["Ana bakes rye bread on Sundays"]);
  await assert.rejects(sdk.forgetMemory(worldId, "ana", second!.memory_id), NotFoundError);
  await sdk.retireNpc(worldId, "ana", "left town");
  assert.equal((await sdk.listNpcs(worldId)).items[0]!.retired, true);
  await assert.rejects(sdk.chat(worldId, "ana", { player_id: "ts-1", text: "Hello?" }), ConflictError);
});

test("the event stream filters by NPC and resumes after a cut connection", async () => {
  const sdk = client();
  const worldId = await world(sdk, "ana", "ben");
  for (let i = 0; i < 3; i++) {
    await sdk.perceive(worldId, "ana", { description: `bell ${i}`, world_time: MORNING });
    await sdk.perceive(worldId, "ben", { description: `drum ${i}`, world_time: MORNING });
  }
  // The log shows only the settled prefix of the store: the last append may take a moment to settle.
  const page = await eventually(() => sdk.listEvents(worldId, { types: ["ObservationMade"], npcId: "ana" }), (p) => p.items.length === 3);
  const listed = page.items;
  const said = listed.map((e) => (e.event.payload as { description?: string }).description);
  assert.deepEqual(said, ["bell 0", "bell 1", "bell 2"]);
  const stream = sdk.streamEvents(worldId, { types: ["ObservationMade"], npcId: "ana" });
  const first = await take(stream, 1);
  assert.equal(stream.lastEventId, String(listed[0]!.seq));
  const rest = await take(sdk.streamEvents(worldId, { types: ["ObservationMade"], npcId: "ana", lastEventId: stream.lastEventId! }), 2);
  assert.deepEqual([...first, ...rest].map((e) => e.seq), listed.map((e) => e.seq));

  // A connection cut inside the second event: the SDK reconnects after the first, with Last-Event-ID.
  const resumedFrom: (string | null)[] = [];
  const cutting: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!String(input).includes("/events/stream")) return response;
    resumedFrom.push(new Headers(init?.headers).get("last-event-id"));
    return resumedFrom.length === 1 ? new Response(cutInsideSecondEvent(response.body!), response) : response;
  };
  const got = await take(client({ fetch: cutting }).streamEvents(worldId, { types: ["ObservationMade"], npcId: "ana" }), 3);
  assert.deepEqual(got.map((e) => e.envelope.payload.description), ["bell 0", "bell 1", "bell 2"]);
  assert.deepEqual(resumedFrom, [null, String(listed[0]!.seq)]);
});

function cutInsideSecondEvent(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = "";
  return new ReadableStream({
    // One pull reads until it can cut: a pull that returns without enqueuing is not called again (the
    // events may come in one chunk or in several, as the server happens to write them).
    async pull(controller) {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        seen += new TextDecoder().decode(value);
        const first = seen.indexOf("\n\n", seen.indexOf("id:"));
        const second = seen.indexOf("id:") === -1 || first === -1 ? -1 : seen.indexOf("\n\n", first + 2);
        if (second === -1) continue;
        controller.enqueue(new TextEncoder().encode(seen.slice(0, second)));
        await reader.cancel();
        return controller.error(new Error("connection lost"));
      }
    },
  });
}

test("a POST whose answer was lost is retried with its Idempotency-Key and runs once", async () => {
  const keys: string[] = [];
  const replayed: (string | null)[] = [];
  const losing: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method !== "POST") return response;
    keys.push(new Headers(init.headers).get("idempotency-key") ?? "");
    replayed.push(response.headers.get("idempotent-replayed"));
    if (keys.length === 1) throw new TypeError("fetch failed: connection reset");
    return response;
  };
  const sdk = client({ fetch: losing, retry: { attempts: 3, baseDelay: 0.01 } });
  const worldId = newId("w");
  assert.equal((await sdk.createWorld({ name: "Once", start_time: T0, world_id: worldId })).world_id, worldId);
  assert.equal(keys[0], keys[1]);
  assert.deepEqual(replayed, [null, "true"]);
  let count = 0;
  for await (const w of sdk.iterWorlds()) if (w.world_id === worldId) count++;
  assert.equal(count, 1);
});

test("keys, player sessions and rate limits", async () => {
  const sdk = client();
  const slow = await sdk.createKey({ name: "slow", scopes: ["read"], rate_per_second: 2, burst: 1 });
  assert.deepEqual((await sdk.getKey(slow.key_id)).scopes, ["read"]);
  const statuses: number[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
  const limited = client({ apiKey: slow.secret, fetch: recording });
  for (let i = 0; i < 2; i++) assert.equal((await limited.getWorld(TOWN)).world_id, TOWN);
  assert.deepEqual(statuses, [200, 429, 200]);
  const impatient = client({ apiKey: slow.secret, retry: { attempts: 1 } });
  await assert.rejects(
    Promise.all([0, 1, 2].map(() => impatient.getWorld(TOWN))),
    (e: unknown) => e instanceof RateLimitError && e.retryAfter !== null,
  );
  await assert.rejects(limited.createWorld({ name: "No", start_time: T0 }), PermissionDeniedError);

  const session = await sdk.createSession(TOWN, { player_id: "ts-player", ttl_seconds: 600 });
  const player = client({ apiKey: session.token });
  await assert.rejects(player.chat(TOWN, "marta", { player_id: "someone-else", text: "hi" }), PermissionDeniedError);
  await sdk.revokeKey(session.session_id);
  await assert.rejects(player.chat(TOWN, "marta", { player_id: "ts-player", text: "hi" }), AuthenticationError);
  await sdk.revokeKey(slow.key_id);
});

test("the clock, places and positions of a studio world", async () => {
  const sdk = client();
  assert.ok((await sdk.templates()).some((t) => t.name === TOWN && t.npc_count === 25));
  const worldId = await world(sdk, "ana");
  await sdk.defineWorld(worldId, { sectors: [{ name: "Inn", arenas: [{ name: "tavern", objects: [{ name: "hearth" }] }] }] });
  const tree = await eventually(() => sdk.tree(worldId).catch(() => null), (t) => t !== null);
  assert.deepEqual(tree!.objects.map((o) => o.path), [`${worldId}:Inn:tavern:hearth`]);
  await sdk.setClock(worldId, { paused: false, mode: "stepped" });
  const clock = await eventually(() => sdk.getClock(worldId), (c) => !c.paused);
  assert.equal(clock.mode, "stepped");
  await sdk.moveNpcs(worldId, [{ npc_id: "ana", path: `${worldId}:Inn:tavern` }]);
  await eventually(() => sdk.npcState(worldId, "ana"), (s) => s.location === `${worldId}:Inn:tavern`);
  await sdk.setObjectState(worldId, `${worldId}:Inn:tavern:hearth`, "roaring");
  await eventually(() => sdk.tree(worldId), (t) => t.objects[0]?.state === "roaring");
  assert.equal((await sdk.llmUsage(worldId)).world_id, worldId);
});

test("webhook deliveries verify with the SDK and a forged one does not", async () => {
  const received: { headers: IncomingHttpHeaders; body: Buffer }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const sdk = client();
    const worldId = await world(sdk, "ana");
    const port = (server.address() as AddressInfo).port;
    const hook = await sdk.createWebhook(worldId, { url: `http://127.0.0.1:${port}/hook`, event_types: ["ObservationMade"] });
    const sent = await sdk.perceive(worldId, "ana", { description: "a letter arrives", world_time: MORNING });
    await eventually(async () => received.length, (n) => n > 0);
    const delivery = await parseWebhook(hook.secret, received[0]!.headers as Record<string, string>, received[0]!.body);
    assert.equal(delivery.event_id, sent.event_id);
    assert.equal(delivery.event.payload.description, "a letter arrives");
    const forged = Buffer.from(received[0]!.body.toString().replace("letter", "bomb"));
    await assert.rejects(parseWebhook(hook.secret, received[0]!.headers as Record<string, string>, forged), WebhookSignatureError);
    const logged = await eventually(() => sdk.listDeliveries(worldId, hook.webhook_id, { status: "delivered" }), (p) => p.items.length > 0);
    const detail = await sdk.getDelivery(worldId, hook.webhook_id, logged.items[0]!.delivery_id);
    assert.equal(detail.attempt_log[0]?.status_code, 200);
    assert.equal((await sdk.redeliver(worldId, hook.webhook_id, detail.delivery_id)).delivery_id, detail.delivery_id);
    assert.equal((await sdk.updateWebhook(worldId, hook.webhook_id, { active: false })).active, false);
    await sdk.deleteWebhook(worldId, hook.webhook_id);
    await assert.rejects(sdk.getWebhook(worldId, hook.webhook_id), NotFoundError);
  } finally {
    server.close();
  }
});

test("the README's example runs as written", async () => {
  const example = new URL("../build/readme/example.js", import.meta.url);
  const { stdout } = await promisify(execFile)(process.execPath, [example.pathname], {
    env: { ...process.env, NPCWORLD_URL: URL_, NPCWORLD_API_KEY: KEY }, timeout: 60_000,
  });
  assert.match(stdout, /Marta Quill/);
  assert.match(stdout, /^marta: .+/m);
});
