// The web game: the demo town drawn on a canvas, the player walking it, the NPCs near the player, and talking
// to them with the TypeScript SDK (a player session token from the game server; the reply streams in).
import { AuthenticationError, Client } from "/sdk/index.js";

const TILE = 14; // pixels per tile
const NEAR = 4; // tiles: who is near enough to talk to
const STEP_MS = 60; // one step of a walk to a clicked tile
const POLL_MS = 2000; // how often the NPCs' positions are read
const MOVES = {
  arrowup: [0, -1], w: [0, -1], arrowdown: [0, 1], s: [0, 1],
  arrowleft: [-1, 0], a: [-1, 0], arrowright: [1, 0], d: [1, 0],
};

const $ = (selector) => document.querySelector(selector);
const game = {
  town: null, background: null, npcs: new Map(), positions: [], nearby: [],
  player: { x: 0, y: 0 }, path: [], session: null, client: null, partner: null,
};

async function getJson(url, options) {
  const answer = await fetch(url, options);
  if (!answer.ok) throw new Error(`${url} answered ${answer.status}: ${await answer.text()}`);
  return answer.json();
}

// -- the player's session: a token that can only chat, only in this world, only as this player

async function startSession() {
  game.session = await getJson("/session", { method: "POST" });
  game.client = new Client({ baseUrl: location.origin, apiKey: game.session.token });
  const until = new Date(game.session.expires_at).toLocaleTimeString();
  $("#status").textContent = `You are ${game.session.player_id} in ${game.session.world_id} (session until ${until}).`;
}

/** Runs `call`; when the session has expired (401), gets a new one from the game server and runs it again. */
async function withSession(call) {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof AuthenticationError)) throw error;
    await startSession();
    return call();
  }
}

// -- the town and who is in it

const walkable = (x, y) => game.town.rows[y]?.[x] !== undefined && game.town.rows[y][x] !== "#";
const size = ({ area: [x0, y0, x1, y1] }) => (x1 - x0 + 1) * (y1 - y0 + 1);

/** The place the tile is in: the smallest area holding it (a room before the streets around it). */
function placeAt(x, y) {
  const holding = game.town.places.filter(({ area: [x0, y0, x1, y1] }) => x >= x0 && x <= x1 && y >= y0 && y <= y1);
  return holding.sort((a, b) => size(a) - size(b))[0];
}

function drawBackground() {
  const { rows, places } = game.town;
  const canvas = Object.assign(document.createElement("canvas"), { width: rows[0].length * TILE, height: rows.length * TILE });
  const g = canvas.getContext("2d");
  g.fillStyle = "#cfe0b4";
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.fillStyle = "#efe3c8";
  for (const { area: [x0, y0, x1, y1] } of places) g.fillRect(x0 * TILE, y0 * TILE, (x1 - x0 + 1) * TILE, (y1 - y0 + 1) * TILE);
  g.fillStyle = "#5b4a3a";
  rows.forEach((row, y) => [...row].forEach((ch, x) => ch === "#" && g.fillRect(x * TILE, y * TILE, TILE, TILE)));
  g.fillStyle = "#333";
  g.font = `${TILE - 3}px sans-serif`;
  const labelled = new Set();
  for (const { sector, area: [x0, y0] } of places) {
    if (!labelled.has(sector)) g.fillText(sector, x0 * TILE + 2, (y0 + 1) * TILE - 2);
    labelled.add(sector);
  }
  return canvas;
}

function dot(g, [x, y], color, letter) {
  g.fillStyle = color;
  g.beginPath();
  g.arc((x + 0.5) * TILE, (y + 0.5) * TILE, TILE / 2, 0, 2 * Math.PI);
  g.fill();
  g.fillStyle = "#fff";
  g.fillText(letter, x * TILE + 3, (y + 1) * TILE - 3);
}

function draw() {
  const g = $("#map").getContext("2d");
  g.drawImage(game.background, 0, 0);
  g.font = `bold ${TILE - 4}px sans-serif`;
  const near = new Set(game.nearby.map((p) => p.npc_id));
  for (const p of game.positions) {
    if (p.tile) dot(g, p.tile, near.has(p.npc_id) ? "#1d5fa8" : "#555", game.npcs.get(p.npc_id)?.name[0] ?? "?");
  }
  dot(g, [game.player.x, game.player.y], "#c0392b", "@");
}

/** The NPCs within NEAR tiles of the player, nearest first, listed with a Talk button each. */
function updateNearby() {
  const { x, y } = game.player;
  const distance = ({ tile: [nx, ny] }) => Math.max(Math.abs(nx - x), Math.abs(ny - y));
  const nearby = game.positions.filter((p) => p.tile && distance(p) <= NEAR).sort((a, b) => distance(a) - distance(b));
  const same = nearby.length === game.nearby.length && nearby.every((p, i) => p.npc_id === game.nearby[i].npc_id);
  game.nearby = nearby;
  if (same) return;
  const list = $("#nearby");
  list.replaceChildren(...nearby.map((p) => {
    const npc = game.npcs.get(p.npc_id);
    const item = Object.assign(document.createElement("li"), { textContent: `${npc.name}, ${npc.occupation} ${p.emoji ?? ""} ` });
    item.dataset.npc = p.npc_id;
    const talk = Object.assign(document.createElement("button"), { textContent: "Talk", onclick: () => talkTo(p.npc_id) });
    item.append(talk);
    return item;
  }));
  if (nearby.length === 0) list.innerHTML = '<li class="none">nobody</li>';
}

function playerMoved() {
  const { x, y } = game.player;
  const place = placeAt(x, y);
  $("#player-pos").textContent = `${x},${y}`;
  $("#where").textContent = place ? `${place.sector}, ${place.arena}` : "outdoors";
  updateNearby();
  draw();
}

async function pollPositions() {
  try {
    game.positions = await getJson("/positions");
    updateNearby();
    draw();
  } finally {
    setTimeout(pollPositions, POLL_MS);
  }
}

// -- walking

function step(dx, dy) {
  const x = game.player.x + dx, y = game.player.y + dy;
  if (!walkable(x, y)) return;
  game.player = { x, y };
  playerMoved();
}

/** The tiles of a shortest walk from the player to (tx, ty), around walls (breadth-first). */
function route(tx, ty) {
  const key = (x, y) => `${x},${y}`;
  const from = new Map([[key(game.player.x, game.player.y), null]]);
  const queue = [[game.player.x, game.player.y]];
  while (queue.length > 0) {
    const [x, y] = queue.shift();
    if (x === tx && y === ty) {
      const path = [];
      for (let at = [x, y]; from.get(key(...at)) !== null; at = from.get(key(...at))) path.unshift(at);
      return path;
    }
    for (const [dx, dy] of [[1, 0], [-1, 0], [0, 1], [0, -1]]) {
      const next = [x + dx, y + dy];
      if (walkable(...next) && !from.has(key(...next))) {
        from.set(key(...next), [x, y]);
        queue.push(next);
      }
    }
  }
  return [];
}

function walk() {
  const next = game.path.shift();
  if (next) {
    game.player = { x: next[0], y: next[1] };
    playerMoved();
  }
  setTimeout(walk, STEP_MS);
}

function clicked(event) {
  const canvas = event.currentTarget, box = canvas.getBoundingClientRect();
  const x = Math.floor(((event.clientX - box.left) * canvas.width) / box.width / TILE);
  const y = Math.floor(((event.clientY - box.top) * canvas.height) / box.height / TILE);
  game.path = route(x, y);
}

function keyDown(event) {
  if (event.target instanceof HTMLInputElement) return;
  const key = event.key.toLowerCase();
  if (key === "t" && game.nearby.length > 0) {
    event.preventDefault(); // the T would otherwise land in the text box
    talkTo(game.nearby[0].npc_id);
  } else if (MOVES[key]) {
    event.preventDefault();
    game.path = [];
    step(...MOVES[key]);
  }
}

// -- talking

function talkTo(npcId) {
  game.partner = npcId;
  $("#talk").hidden = false;
  $("#talk-with").textContent = game.npcs.get(npcId).name;
  $("#line").focus();
}

function logLine(kind, who, text) {
  const line = Object.assign(document.createElement("p"), { className: kind });
  const name = Object.assign(document.createElement("b"), { textContent: `${who}: ` });
  line.append(name, Object.assign(document.createElement("span"), { className: "text", textContent: text }));
  $("#log").append(line);
  return line;
}

/** Says `text` to the NPC and shows its reply as it is produced: each chunk as it comes, then the reply. */
async function say(npcId, text) {
  logLine("player", "You", text);
  const line = logLine("npc", game.npcs.get(npcId).name, "");
  line.dataset.npc = npcId;
  line.dataset.state = "streaming";
  const out = line.querySelector(".text"), log = $("#log");
  try {
    const body = { player_id: game.session.player_id, text };
    const sent = await withSession(() => game.client.sendChat(game.town.world_id, npcId, body));
    line.dataset.eventId = sent.event_id;
    for await (const part of game.client.streamChat(game.town.world_id, npcId, sent.event_id)) {
      if (part.kind === "chunk") out.append(Object.assign(document.createElement("span"), { className: "chunk", textContent: part.text }));
      else out.textContent = part.reply; // the validated reply, as stored, replaces the preview
      log.scrollTop = log.scrollHeight;
    }
    line.dataset.state = "done";
  } catch (error) {
    line.dataset.state = "failed";
    out.textContent = `(no answer: ${error.message})`;
  }
}

function submitted(event) {
  event.preventDefault();
  const input = $("#line");
  const text = input.value.trim();
  input.value = "";
  if (text && game.partner) say(game.partner, text);
}

/** The walkable tile nearest the middle of the map. */
function spawnPoint() {
  const { rows } = game.town;
  const cx = Math.floor(rows[0].length / 2), cy = Math.floor(rows.length / 2);
  const tiles = rows.flatMap((row, y) => [...row].map((_, x) => ({ x, y }))).filter(({ x, y }) => walkable(x, y));
  const away = ({ x, y }) => Math.abs(x - cx) + Math.abs(y - cy);
  return tiles.sort((a, b) => away(a) - away(b))[0];
}

async function main() {
  game.town = await getJson("/town");
  game.npcs = new Map(game.town.npcs.map((npc) => [npc.npc_id, npc]));
  game.background = drawBackground();
  Object.assign($("#map"), { width: game.background.width, height: game.background.height });
  await startSession();
  game.positions = await getJson("/positions");
  game.player = spawnPoint();
  playerMoved();
  $("#map").addEventListener("click", clicked);
  document.addEventListener("keydown", keyDown);
  $("#say").addEventListener("submit", submitted);
  setTimeout(pollPositions, POLL_MS);
  walk();
  document.body.dataset.ready = "true";
}

main().catch((error) => {
  $("#status").textContent = `The game could not start: ${error.message}`;
});
