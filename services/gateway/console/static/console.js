// The console's few scripts: the world map and its timeline, the memory filter, the event log's live tail.
"use strict";

function el(tag, attrs, text) {
  const node = document.createElementNS(tag === "svg" || attrs.svg ? "http://www.w3.org/2000/svg"
                                        : "http://www.w3.org/1999/xhtml", tag);
  for (const [k, v] of Object.entries(attrs)) if (k !== "svg") node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function short(frame, width) {
  const d = frame.description || "";
  const text = d.length <= width ? d : d.slice(0, width - 1) + "…";
  return ((frame.emoji || "") + " " + text).trim();
}

// The state after every change up to time t, from the window's opening state (as replay.state_at does).
function stateAt(start, changes, t) {
  const state = {};
  for (const [n, f] of Object.entries(start)) state[n] = Object.assign({}, f);
  for (const c of changes) {
    if (c.t > t) break;
    const f = state[c.npc];
    if (!f) continue;
    if (c.path !== undefined) { f.path = c.path; f.tile = c.tile === undefined ? null : c.tile; }
    else if (c.tile !== undefined) f.tile = c.tile;
    if (c.description !== undefined) { f.description = c.description; f.emoji = c.emoji || ""; }
  }
  return state;
}

// Changes a live event makes (NpcsMoved, ActionStarted), as replay.changes_of makes them.
function changesOf(seq, envelope) {
  const t = Date.parse(envelope.world_time), p = envelope.payload;
  if (envelope.type === "NpcsMoved")
    return p.moves.map(m => ({seq, t, npc: m.npc_id, path: m.path, tile: m.tile === null ? undefined : m.tile}));
  if (envelope.type === "ActionStarted" && envelope.npc_id) {
    const c = {seq, t, npc: envelope.npc_id, description: p.description, emoji: p.emoji || ""};
    if (p.arrived_at) c.path = p.arrived_at;
    return [c];
  }
  return [];
}

function consoleWorld(data) {
  const scrub = document.getElementById("scrubber");
  if (!scrub) return;
  const clock = document.getElementById("clock"), play = document.getElementById("play");
  const speed = document.getElementById("speed"), follow = document.getElementById("follow");
  const map = document.getElementById("map"), tree = document.getElementById("tree");
  const table = document.getElementById("npcs");
  const changes = data.changes;
  let timer = null;
  const tile = 12;

  let svg = null, layer = null;
  if (map && data.tile_map) {
    const tm = data.tile_map;
    svg = el("svg", {viewBox: `0 0 ${tm.width * tile} ${tm.height * tile}`, class: "tiles"});
    const size = (p) => (p.area[2] - p.area[0] + 1) * (p.area[3] - p.area[1] + 1);
    // Largest first, so a street around the houses does not cover them; walls over everything.
    for (const p of data.places.filter((p) => p.area).sort((a, b) => size(b) - size(a))) {
      const [x0, y0, x1, y1] = p.area;
      svg.appendChild(el("rect", {svg: 1, x: x0 * tile, y: y0 * tile, width: (x1 - x0 + 1) * tile,
                                  height: (y1 - y0 + 1) * tile, class: "arena"}));
      svg.appendChild(el("text", {svg: 1, x: x0 * tile + 2, y: y0 * tile + 9, class: "label"}, `${p.sector}: ${p.arena}`));
    }
    tm.rows.forEach((row, y) => {
      for (let x = 0; x < row.length; x++)
        if (row[x] === "#") svg.appendChild(el("rect", {svg: 1, x: x * tile, y: y * tile, width: tile, height: tile, class: "wall"}));
    });
    layer = el("g", {svg: 1});
    svg.appendChild(layer);
    map.appendChild(svg);
  }
  const centre = {};
  for (const p of data.places) if (p.area) centre[p.path] = [(p.area[0] + p.area[2]) >> 1, (p.area[1] + p.area[3]) >> 1];

  function draw(t) {
    const state = stateAt(data.start, changes, t);
    clock.textContent = new Date(t).toISOString().slice(0, 19).replace("T", " ");
    if (layer) {
      layer.replaceChildren();
      for (const [n, f] of Object.entries(state)) {
        const at = f.tile || (f.path ? centre[f.path.split(":").slice(0, 3).join(":")] : null);
        if (!at) continue;
        const g = el("g", {svg: 1, class: "npc-dot", "data-npc": n});
        g.appendChild(el("circle", {svg: 1, cx: at[0] * tile + tile / 2, cy: at[1] * tile + tile / 2, r: tile / 2}));
        g.appendChild(el("text", {svg: 1, x: at[0] * tile + tile, y: at[1] * tile, class: "say"}, `${f.name.split(" ")[0]} ${short(f, 24)}`));
        layer.appendChild(g);
      }
    }
    if (tree) {
      const sectors = new Map();
      for (const p of data.places) {
        const here = Object.entries(state).filter(([, f]) => f.path && f.path.split(":").slice(0, 3).join(":") === p.path);
        if (!here.length) continue;
        if (!sectors.has(p.sector)) sectors.set(p.sector, []);
        sectors.get(p.sector).push([p, here]);
      }
      tree.replaceChildren();
      for (const [sector, arenas] of sectors) {
        const s = el("div", {class: "sector"}); s.appendChild(el("b", {}, sector));
        for (const [p, here] of arenas) {
          const a = el("div", {class: "arena"}, p.arena);
          for (const [n, f] of here.sort()) {
            const row = el("div", {class: "npc", "data-npc": n});
            const link = el("a", {href: `/console/worlds/${data.world}/npcs/${n}`}, f.name);
            row.appendChild(link); row.appendChild(document.createTextNode(" " + short(f, 40)));
            a.appendChild(row);
          }
          s.appendChild(a);
        }
        tree.appendChild(s);
      }
    }
    if (table) for (const row of table.querySelectorAll("tr[data-npc]")) {
      const f = state[row.dataset.npc];
      if (!f) continue;
      row.querySelector(".where").textContent = (f.path || "").split(":").slice(1).join(" › ");
      row.querySelector(".doing").textContent = short(f, 80);
    }
  }

  function stop() { if (timer) { clearInterval(timer); timer = null; play.textContent = "▶ Play"; } }
  scrub.addEventListener("input", () => { follow.checked = Number(scrub.value) >= Number(scrub.max); stop(); draw(Number(scrub.value)); });
  play.addEventListener("click", () => {
    if (timer) return stop();
    follow.checked = false;
    if (Number(scrub.value) >= Number(scrub.max)) scrub.value = scrub.min;
    play.textContent = "⏸ Pause";
    timer = setInterval(() => {
      const next = Math.min(Number(scrub.max), Number(scrub.value) + Number(speed.value) * 100);
      scrub.value = next; draw(next);
      if (next >= Number(scrub.max)) stop();
    }, 100);
  });
  follow.addEventListener("change", () => { if (follow.checked) { stop(); scrub.value = scrub.max; draw(Number(scrub.max)); } });

  const source = new EventSource(`/console/worlds/${encodeURIComponent(data.world)}/stream?after=${data.last_seq}&type=NpcsMoved,ActionStarted,WorldTicked`);
  for (const type of ["NpcsMoved", "ActionStarted", "WorldTicked"]) source.addEventListener(type, (message) => {
    const envelope = JSON.parse(message.data), t = Date.parse(envelope.world_time);
    changes.push(...changesOf(Number(message.lastEventId), envelope));
    if (t > Number(scrub.max)) scrub.max = t;
    if (follow.checked) { scrub.value = scrub.max; draw(Number(scrub.max)); }
  });
  draw(Number(scrub.value));
}

function consoleFilter(inputId, rows) {
  const input = document.getElementById(inputId);
  if (!input) return;
  input.addEventListener("input", () => {
    const needle = input.value.toLowerCase();
    for (const row of document.querySelectorAll(rows)) row.hidden = needle && !row.textContent.toLowerCase().includes(needle);
  });
}

function consoleTail(q) {
  const box = document.getElementById("tail"), table = document.getElementById("events");
  let source = null;
  box.addEventListener("change", () => {
    if (!box.checked) { if (source) source.close(); source = null; return; }
    const params = new URLSearchParams({after: q.after, type: q.type, npc: q.npc});
    source = new EventSource(`/console/worlds/${encodeURIComponent(q.world)}/stream?${params}`);
    const add = (message) => {
      const e = JSON.parse(message.data);
      q.after = Number(message.lastEventId);
      const row = el("tr", {class: "live"});
      const gist = JSON.stringify(e.payload);
      for (const text of [message.lastEventId, e.world_time.slice(0, 19).replace("T", " "), e.type,
                          e.world_id + (e.npc_id ? " / " + e.npc_id : ""), gist.length > 160 ? gist.slice(0, 159) + "…" : gist])
        row.appendChild(el("td", {}, text));
      const why = el("td", {}); why.appendChild(el("a", {href: `/console/why/${e.event_id}`}, "why?"));
      row.appendChild(why);
      table.appendChild(row);
    };
    // The stream names each message by its event type: listen to the chosen ones, or to every type.
    const types = q.type ? q.type.split(",") : q.types;
    for (const type of types) source.addEventListener(type, add);
  });
}
