// Client: one method per API operation, grouped by resource. Bodies are the contract's own types.
import { ReplyTimeoutError } from "./errors.js";
import { sleep } from "./retry.js";
import { type ClientOptions, EventStream, type Query, Transport, compact, path } from "./transport.js";
import type * as T from "./types.js";

/** Per-call options: every POST carries an Idempotency-Key, reused by its retries; choose it here. */
export interface CallOptions {
  idempotencyKey?: string;
}

export interface PageOptions {
  cursor?: string;
  limit?: number;
}

/** A piece of a chat's reply as the NPC produces it (`index` from 1; also its SSE id). */
export interface ChatChunk {
  kind: "chunk";
  index: number;
  text: string;
}

export interface EventFilter {
  types?: string[];
  npcId?: string;
}

/**
 * The npcworld REST API. `new Client()` reads NPCWORLD_URL and NPCWORLD_API_KEY.
 * `list*` return one page; `iter*` walk every page (`for await`).
 */
export class Client {
  readonly transport: Transport;

  constructor(options: ClientOptions = {}) {
    this.transport = new Transport(options);
  }

  private get<R>(url: string, query?: Query): Promise<R> {
    return this.transport.json<R>("GET", url, { query });
  }

  private post<R>(url: string, body: object | undefined, options: CallOptions = {}): Promise<R> {
    return this.transport.json<R>("POST", url, { body, idempotencyKey: options.idempotencyKey });
  }

  private async remove(url: string): Promise<void> {
    await this.transport.request("DELETE", url);
  }

  // -- tenant, keys, player sessions

  tenant(): Promise<T.TenantOut> {
    return this.get("/v1/tenant");
  }

  createKey(body: T.KeyIn, options?: CallOptions): Promise<T.KeyCreated> {
    return this.post("/v1/keys", body, options);
  }

  listKeys(page: PageOptions = {}): Promise<T.Page<T.KeyOut>> {
    return this.get("/v1/keys", { ...page });
  }

  iterKeys(pageSize?: number): AsyncGenerator<T.KeyOut> {
    return this.transport.iterate((cursor) => this.listKeys({ cursor, limit: pageSize }));
  }

  getKey(keyId: string): Promise<T.KeyOut> {
    return this.get(path("/v1/keys/{}", keyId));
  }

  /** Revoke a key or end a player session (effective at once). */
  revokeKey(keyId: string): Promise<void> {
    return this.remove(path("/v1/keys/{}", keyId));
  }

  /** Forget a player in every world (admin): what it said reads `[forgotten]` at once, and its memories and
   * relationships go; a player that never said anything is a NotFoundError. */
  forgetPlayer(playerId: string): Promise<T.ForgottenOut> {
    return this.transport.json<T.ForgottenOut>("DELETE", path("/v1/players/{}", playerId));
  }

  /** A player session token: `chat` in this world only, as this player only, until it expires. */
  createSession(worldId: string, body: T.SessionIn, options?: CallOptions): Promise<T.SessionOut> {
    return this.post(path("/v1/worlds/{}/sessions", worldId), body, options);
  }

  // -- worlds

  templates(): Promise<T.TemplateOut[]> {
    return this.get("/v1/templates");
  }

  createWorld(body: T.WorldIn, options?: CallOptions): Promise<T.WorldOut> {
    return this.post("/v1/worlds", compact(body), options);
  }

  listWorlds(page: PageOptions = {}): Promise<T.Page<T.WorldOut>> {
    return this.get("/v1/worlds", { ...page });
  }

  iterWorlds(pageSize?: number): AsyncGenerator<T.WorldOut> {
    return this.transport.iterate((cursor) => this.listWorlds({ cursor, limit: pageSize }));
  }

  getWorld(worldId: string): Promise<T.WorldOut> {
    return this.get(path("/v1/worlds/{}", worldId));
  }

  deleteWorld(worldId: string): Promise<void> {
    return this.remove(path("/v1/worlds/{}", worldId));
  }

  /** A new world holding this one's history up to world time `at`. */
  forkWorld(worldId: string, body: T.ForkIn, options?: CallOptions): Promise<T.WorldOut> {
    return this.post(path("/v1/worlds/{}/fork", worldId), compact(body), options);
  }

  llmUsage(worldId: string, range: { since?: string; until?: string } = {}): Promise<T.UsageOut> {
    return this.get(path("/v1/worlds/{}/llm-usage", worldId), range);
  }

  // -- NPCs

  createNpc(worldId: string, body: T.NpcIn, options?: CallOptions): Promise<T.NpcOut> {
    return this.post(path("/v1/worlds/{}/npcs", worldId), compact(body), options);
  }

  listNpcs(worldId: string, page: PageOptions = {}): Promise<T.Page<T.NpcOut>> {
    return this.get(path("/v1/worlds/{}/npcs", worldId), { ...page });
  }

  iterNpcs(worldId: string, pageSize?: number): AsyncGenerator<T.NpcOut> {
    return this.transport.iterate((cursor) => this.listNpcs(worldId, { cursor, limit: pageSize }));
  }

  npcState(worldId: string, npcId: string): Promise<T.NpcStateOut> {
    return this.get(path("/v1/worlds/{}/npcs/{}/state", worldId, npcId));
  }

  relationships(worldId: string, npcId: string): Promise<T.RelationshipOut[]> {
    return this.get(path("/v1/worlds/{}/npcs/{}/relationships", worldId, npcId));
  }

  plan(worldId: string, npcId: string): Promise<T.PlanOut> {
    return this.get(path("/v1/worlds/{}/npcs/{}/plan", worldId, npcId));
  }

  /** Something the NPC perceived (stored as ObservationMade). */
  perceive(worldId: string, npcId: string, body: T.PerceptionIn, options?: CallOptions): Promise<T.Accepted> {
    return this.post(path("/v1/worlds/{}/npcs/{}/perceptions", worldId, npcId), compact(body), options);
  }

  // -- talking

  /**
   * Say `text` to the NPC as `player_id` and return its reply, waiting up to `timeoutS` seconds (default 60);
   * throws ReplyTimeoutError when none came (the chat stands: `chatResult` may have it later).
   */
  async chat(
    worldId: string,
    npcId: string,
    body: { player_id: string; text: string; world_time?: string },
    options: CallOptions & { timeoutS?: number } = {},
  ): Promise<T.ReplyOut> {
    const timeoutS = options.timeoutS ?? 60;
    const deadline = Date.now() + timeoutS * 1000;
    // The gateway waits at most 60 s; then the chat's result is polled until the deadline.
    const serverWait = Math.min(60, Math.max(0.1, timeoutS));
    const answer = await this.transport.request("POST", path("/v1/worlds/{}/npcs/{}/chat", worldId, npcId), {
      body: compact({ ...body, wait: true, timeout_s: serverWait }),
      idempotencyKey: options.idempotencyKey,
      timeoutMs: (serverWait + 10) * 1000,
    });
    if (answer.status === 200) return (await answer.json()) as T.ReplyOut;
    const pending = (await answer.json()) as T.ReplyPending;
    return this.waitForReply(worldId, npcId, pending.event_id, { timeoutS: Math.max(0, (deadline - Date.now()) / 1000) });
  }

  /** Say `text` without waiting: the answer names the chat (`event_id`) for `chatResult`. */
  sendChat(
    worldId: string,
    npcId: string,
    body: { player_id: string; text: string; world_time?: string },
    options?: CallOptions,
  ): Promise<T.ReplyPending> {
    return this.post(path("/v1/worlds/{}/npcs/{}/chat", worldId, npcId), compact({ ...body, wait: false }), options);
  }

  /** A chat's reply, or a ReplyPending (`status: "pending"`) while the NPC has not answered yet. */
  /**
   * A chat's reply as the NPC produces it (`eventId` from `sendChat`): `ChatChunk`s (`kind: "chunk"`), then
   * the reply (`kind: "reply"`), and the end. Chunks are a preview; the reply is what was validated and
   * stored. Connecting late gives what was produced so far; `lastEventId` resumes after a chunk's index.
   */
  async *streamChat(
    worldId: string,
    npcId: string,
    eventId: string,
    options: { lastEventId?: string | number } = {},
  ): AsyncGenerator<ChatChunk | ({ kind: "reply" } & T.ReplyOut)> {
    const url = path("/v1/worlds/{}/npcs/{}/chats/{}/stream", worldId, npcId, eventId);
    const resume = options.lastEventId === undefined ? null : String(options.lastEventId);
    const stream = new EventStream(this.transport, url, {}, resume);
    try {
      for await (const event of stream) {
        const data = event.envelope as unknown as Record<string, unknown>;
        if (event.type === "reply") {
          yield { kind: "reply", ...(data as unknown as T.ReplyOut) };
          return;
        }
        yield { kind: "chunk", index: event.seq, text: String(data.text) };
      }
    } finally {
      stream.close();
    }
  }

  async chatResult(worldId: string, npcId: string, eventId: string): Promise<T.ReplyOut | T.ReplyPending> {
    const answer = await this.transport.request("GET", path("/v1/worlds/{}/npcs/{}/chats/{}", worldId, npcId, eventId));
    return (await answer.json()) as T.ReplyOut | T.ReplyPending;
  }

  /** Poll a chat's result until the reply is there (ReplyTimeoutError after `timeoutS`, default 60). */
  async waitForReply(
    worldId: string,
    npcId: string,
    eventId: string,
    options: { timeoutS?: number; intervalS?: number } = {},
  ): Promise<T.ReplyOut> {
    const deadline = Date.now() + (options.timeoutS ?? 60) * 1000;
    for (;;) {
      const result = await this.chatResult(worldId, npcId, eventId);
      if (!("status" in result)) return result;
      if (Date.now() >= deadline) throw new ReplyTimeoutError(`no reply to chat ${eventId} in time`);
      await sleep(options.intervalS ?? 0.25);
    }
  }

  /** Ask the NPC a question out of the game (a designer's interview); pending if the reply is late. */
  interview(
    worldId: string,
    npcId: string,
    body: { interviewer: string; question: string; wait?: boolean },
    options?: CallOptions,
  ): Promise<T.ReplyOut | T.ReplyPending> {
    return this.post(path("/v1/worlds/{}/npcs/{}/interview", worldId, npcId), compact(body), options);
  }

  /** A thought put in the NPC's head, held as its own (`voice` scope). */
  innerVoice(worldId: string, npcId: string, directive: string, options?: CallOptions): Promise<T.Accepted> {
    return this.post(path("/v1/worlds/{}/npcs/{}/inner-voice", worldId, npcId), { directive }, options);
  }

  // -- memories

  listMemories(
    worldId: string,
    npcId: string,
    filter: PageOptions & { kind?: T.MemoryOut["kind"]; since?: string; until?: string } = {},
  ): Promise<T.MemoryPageOut> {
    return this.get(path("/v1/worlds/{}/npcs/{}/memories", worldId, npcId), { ...filter });
  }

  iterMemories(worldId: string, npcId: string, kind?: T.MemoryOut["kind"]): AsyncGenerator<T.MemoryOut> {
    return this.transport.iterate((cursor) => this.listMemories(worldId, npcId, { cursor, kind }));
  }

  /** The memories the NPC would recall for `query`, with their recency/importance/relevance scores. */
  async retrieveMemories(worldId: string, npcId: string, body: T.RetrieveIn): Promise<T.RetrievedOut[]> {
    const found = await this.post<{ items: T.RetrievedOut[] }>(
      path("/v1/worlds/{}/npcs/{}/memories/retrieve", worldId, npcId), compact(body),
    );
    return found.items;
  }

  // -- designers' edits (each an event on the server, so forks and replays keep it)

  /** Change the persona fields given (`occupation: null` clears it); the NPC as it is now. */
  updateNpc(worldId: string, npcId: string, body: T.NpcPatch): Promise<T.NpcOut> {
    return this.transport.json("PATCH", path("/v1/worlds/{}/npcs/{}", worldId, npcId), { body });
  }

  /** The NPC stops perceiving, planning, acting and talking; its history stays readable. */
  async retireNpc(worldId: string, npcId: string, reason?: string): Promise<void> {
    await this.transport.request("DELETE", path("/v1/worlds/{}/npcs/{}", worldId, npcId), { query: { reason } });
  }

  /** Replace a memory's text; the memory service re-embeds it a moment later (the answer is the event). */
  correctMemory(worldId: string, npcId: string, memoryId: string, description: string): Promise<T.Accepted> {
    const url = path("/v1/worlds/{}/npcs/{}/memories/{}", worldId, npcId, memoryId);
    return this.transport.json("PATCH", url, { body: { description } });
  }

  /** Remove a memory from retrieval and listings (applied by the memory service a moment later). */
  forgetMemory(worldId: string, npcId: string, memoryId: string): Promise<T.Accepted> {
    return this.transport.json("DELETE", path("/v1/worlds/{}/npcs/{}/memories/{}", worldId, npcId, memoryId));
  }

  // -- events

  listEvents(worldId: string, filter: EventFilter & PageOptions & { until?: string } = {}): Promise<T.Page<T.EventOut>> {
    const { types, npcId, ...rest } = filter;
    return this.get(path("/v1/worlds/{}/events", worldId), { ...rest, type: types, npc_id: npcId });
  }

  iterEvents(worldId: string, filter: EventFilter & { pageSize?: number } = {}): AsyncGenerator<T.EventOut> {
    const { pageSize, ...rest } = filter;
    return this.transport.iterate((cursor) => this.listEvents(worldId, { ...rest, cursor, limit: pageSize }));
  }

  /**
   * The world's events from the start (or after `after`/`lastEventId`), then live, over SSE. A broken
   * connection is resumed with Last-Event-ID: no event is lost or repeated.
   */
  streamEvents(worldId: string, filter: EventFilter & { after?: number; lastEventId?: string | number } = {}): EventStream {
    const query: Query = { type: filter.types, npc_id: filter.npcId, after: filter.after };
    const resume = filter.lastEventId === undefined ? null : String(filter.lastEventId);
    return new EventStream(this.transport, path("/v1/worlds/{}/events/stream", worldId), query, resume);
  }

  // -- simulation: clock, places, positions

  getClock(worldId: string): Promise<T.ClockOut> {
    return this.get(path("/v1/worlds/{}/clock", worldId));
  }

  /** Change the world clock; fields left out keep their value. */
  setClock(worldId: string, body: T.ClockIn, options?: CallOptions): Promise<T.Accepted> {
    return this.post(path("/v1/worlds/{}/clock", worldId), compact(body), options);
  }

  /** A studio world's place tree: sectors → arenas → objects. */
  defineWorld(worldId: string, body: T.DefinitionIn, options?: CallOptions): Promise<T.Accepted> {
    return this.post(path("/v1/worlds/{}/definition", worldId), body, options);
  }

  tree(worldId: string, tiles = false): Promise<T.TreeOut> {
    return this.get(path("/v1/worlds/{}/tree", worldId), { tiles: tiles || undefined });
  }

  setObjectState(worldId: string, objectPath: string, state: string, options?: CallOptions): Promise<T.Accepted> {
    return this.post(path("/v1/worlds/{}/object-states", worldId), { object_path: objectPath, state }, options);
  }

  /** Place NPCs, as a game that moves them itself does. */
  moveNpcs(worldId: string, moves: T.PositionIn[], options?: CallOptions): Promise<T.Accepted> {
    return this.post(path("/v1/worlds/{}/positions", worldId), { moves }, options);
  }

  // -- webhooks

  /** A subscription; keep its `secret` (shown only here) to verify deliveries. */
  createWebhook(worldId: string, body: T.WebhookIn, options?: CallOptions): Promise<T.WebhookCreated> {
    return this.post(path("/v1/worlds/{}/webhooks", worldId), compact(body), options);
  }

  listWebhooks(worldId: string, page: PageOptions = {}): Promise<T.Page<T.WebhookOut>> {
    return this.get(path("/v1/worlds/{}/webhooks", worldId), { ...page });
  }

  iterWebhooks(worldId: string): AsyncGenerator<T.WebhookOut> {
    return this.transport.iterate((cursor) => this.listWebhooks(worldId, { cursor }));
  }

  getWebhook(worldId: string, webhookId: string): Promise<T.WebhookOut> {
    return this.get(path("/v1/worlds/{}/webhooks/{}", worldId, webhookId));
  }

  updateWebhook(worldId: string, webhookId: string, body: T.WebhookPatch): Promise<T.WebhookOut> {
    return this.transport.json("PATCH", path("/v1/worlds/{}/webhooks/{}", worldId, webhookId), { body: compact(body) });
  }

  deleteWebhook(worldId: string, webhookId: string): Promise<void> {
    return this.remove(path("/v1/worlds/{}/webhooks/{}", worldId, webhookId));
  }

  listDeliveries(
    worldId: string,
    webhookId: string,
    filter: PageOptions & { status?: "pending" | "delivered" | "failed" } = {},
  ): Promise<T.Page<T.DeliveryOut>> {
    return this.get(path("/v1/worlds/{}/webhooks/{}/deliveries", worldId, webhookId), { ...filter });
  }

  getDelivery(worldId: string, webhookId: string, deliveryId: number): Promise<T.DeliveryDetail> {
    return this.get(path("/v1/worlds/{}/webhooks/{}/deliveries/{}", worldId, webhookId, deliveryId));
  }

  /** Queue a delivery again now, with a fresh attempt budget. */
  redeliver(worldId: string, webhookId: string, deliveryId: number, options?: CallOptions): Promise<T.DeliveryOut> {
    return this.post(path("/v1/worlds/{}/webhooks/{}/deliveries/{}/redeliver", worldId, webhookId, deliveryId), undefined, options);
  }
}
