// The studio's game server for the web game: it serves the page, holds the studio key, mints one player
// session token per visitor, reads the town for the page, and passes the page's chat calls to the gateway.
// Node 18+, no dependencies beyond the TypeScript SDK's build (sdk/typescript/dist).
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const PUBLIC = join(HERE, "public");
const SDK_DIST = join(HERE, "..", "..", "sdk", "typescript", "dist");
const GATEWAY = new URL(process.env.NPCWORLD_URL ?? "http://127.0.0.1:8000");
const WORLD = process.env.WORLD ?? "brindle-hollow";
const PORT = Number(process.env.PORT ?? 8080);
const HOST = process.env.HOST ?? "127.0.0.1";
const SESSION_TTL_S = 3600;
const POSITIONS_MAX_AGE_MS = 1500; // every page polls; the gateway is asked at most this often
// The only gateway routes the page reaches: a session token may chat, read its chats' results and stream them.
const CHAT_ROUTE = new RegExp(`^/v1/worlds/${WORLD.replace(/[^A-Za-z0-9_-]/g, "\\$&")}/npcs/[A-Za-z0-9_.:@-]+/(chat|chats/[0-9a-f-]+(/stream)?)$`);
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".map": "application/json" };

let Client;
try {
  ({ Client } = await import(pathToFileURL(join(SDK_DIST, "index.js")).href));
} catch (error) {
  console.error(`the TypeScript SDK is not built (${error.message}): run (cd sdk/typescript && npm ci) first`);
  process.exit(1);
}
if (!process.env.NPCWORLD_API_KEY) {
  console.error("set NPCWORLD_API_KEY to the studio key (make run writes it to .npcworld/demo-api-key)");
  process.exit(1);
}
// The studio key stays in this process: the page gets a session token that can only chat, as one player.
const studio = new Client({ baseUrl: GATEWAY.href, apiKey: process.env.NPCWORLD_API_KEY });
let town = null;
let positions = { at: 0, pending: null, items: [] };

async function loadTown() {
  const tree = await studio.tree(WORLD, true);
  const npcs = [];
  for await (const npc of studio.iterNpcs(WORLD)) {
    if (!npc.retired) npcs.push({ npc_id: npc.npc_id, name: npc.name, occupation: npc.occupation ?? "" });
  }
  const places = tree.sectors.flatMap((sector) =>
    sector.arenas.filter((arena) => arena.area).map((arena) => ({ sector: sector.name, arena: arena.name, area: arena.area })),
  );
  return { world_id: WORLD, rows: tree.tile_rows ?? [], places, npcs };
}

async function readPositions() {
  const states = await Promise.all(
    town.npcs.map((npc) => studio.npcState(WORLD, npc.npc_id).catch(() => null)),
  );
  return states
    .filter((s) => s !== null)
    .map((s) => ({ npc_id: s.npc_id, tile: s.tile ?? null, location: s.location ?? null, action: s.action ?? "", emoji: s.emoji }));
}

/** The NPCs' positions, read again when the last read is older than POSITIONS_MAX_AGE_MS. */
async function currentPositions() {
  if (positions.pending === null && Date.now() - positions.at > POSITIONS_MAX_AGE_MS) {
    positions.pending = readPositions()
      .then((items) => Object.assign(positions, { at: Date.now(), items }))
      .finally(() => { positions.pending = null; });
  }
  const reading = positions.pending;
  if (positions.at === 0 && reading !== null) await reading; // the first read: nothing to show before it
  else reading?.catch(() => {}); // a later read that fails keeps the last positions; the next poll retries
  return positions.items;
}

async function newSession() {
  const playerId = `guest-${randomBytes(3).toString("hex")}`;
  const session = await studio.createSession(WORLD, { player_id: playerId, ttl_seconds: SESSION_TTL_S });
  return { token: session.token, player_id: session.player_id, world_id: WORLD, expires_at: session.expires_at };
}

function send(res, status, body, type = "application/json") {
  const text = typeof body === "string" || body instanceof Buffer ? body : JSON.stringify(body);
  res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
  res.end(text);
}

async function serveFile(res, root, relative) {
  const file = normalize(join(root, relative));
  if (!file.startsWith(root + sep)) return send(res, 404, { detail: "not found" });
  try {
    send(res, 200, await readFile(file), TYPES[extname(file)] ?? "application/octet-stream");
  } catch {
    send(res, 404, { detail: "not found" });
  }
}

/** Passes one chat call to the gateway as the page sent it (its own session token), streaming the answer. */
function proxy(req, res) {
  const headers = {};
  for (const name of ["authorization", "content-type", "accept", "idempotency-key", "last-event-id", "content-length"]) {
    if (req.headers[name] !== undefined) headers[name] = req.headers[name];
  }
  const target = new URL(req.url, GATEWAY);
  const upstream = (target.protocol === "https:" ? https : http).request(target, { method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on("error", (error) => {
    if (!res.headersSent) send(res, 502, { title: "Bad gateway", status: 502, detail: error.message });
    else res.destroy();
  });
  res.on("close", () => upstream.destroy());
  req.pipe(upstream);
}

async function route(req, res) {
  const { pathname } = new URL(req.url, "http://game");
  if (CHAT_ROUTE.test(pathname)) return proxy(req, res);
  if (req.method === "POST" && pathname === "/session") return send(res, 201, await newSession());
  if (req.method !== "GET") return send(res, 405, { detail: "method not allowed" });
  if (pathname === "/town") return send(res, 200, town ?? (town = await loadTown()));
  if (pathname === "/positions") return send(res, 200, await currentPositions());
  if (pathname.startsWith("/sdk/")) return serveFile(res, SDK_DIST, pathname.slice("/sdk/".length));
  return serveFile(res, PUBLIC, pathname === "/" ? "index.html" : pathname.slice(1));
}

const server = http.createServer((req, res) => {
  route(req, res).catch((error) => {
    console.error(`${req.method} ${req.url}: ${error.message}`);
    const status = error.status ?? 502; // the gateway's own answer (a 404 for a missing world), else 502
    if (!res.headersSent) send(res, status, { title: error.title ?? "Bad gateway", status, detail: error.message });
  });
});
server.listen(PORT, HOST, () => {
  console.log(`the web game is on http://${HOST}:${server.address().port}/ (world ${WORLD}, gateway ${GATEWAY.origin})`);
});
