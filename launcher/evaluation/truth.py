"""Each NPC's ground truth, read from its world's event log: persona and seed, what it perceived, its latest
day plan, its reflections, and the conversations it took part in."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from launcher.evaluation.questions import NpcTruth, Perceived, PlanStep

__all__ = ["read_truths"]

_TYPES = ["NpcCreated", "ObservationMade", "DayPlanned", "PlanRevised", "ReflectionCompleted",
          "UtteranceSpoken", "ConversationEnded"]


def _steps(items: list[dict[str, Any]]) -> list[PlanStep]:
    return [PlanStep(datetime.fromisoformat(i["start"]), i["description"],
                     i["location_path"].split(":", 1)[-1]) for i in items]


def _told(steps: list[PlanStep]) -> list[str]:
    return [f"{s.start:%H:%M} {s.description}" for s in steps]


class _Facts:
    def __init__(self) -> None:
        self.created: dict[str, dict[str, Any]] = {}
        self.perceived: dict[str, list[Perceived]] = defaultdict(list)
        self.plan: dict[str, list[PlanStep]] = {}
        self.planned: dict[str, list[str]] = defaultdict(list)
        self.reflections: dict[str, list[str]] = defaultdict(list)
        self.heard: dict[str, list[str]] = defaultdict(list)

    def add(self, kind: str, npc_id: str | None, when: datetime, p: dict[str, Any]) -> None:
        if kind == "NpcCreated":
            self.created[p["npc_id"]] = p
        elif kind == "ObservationMade" and npc_id:
            self.perceived[npc_id].append(Perceived(when, p["description"], p.get("subject")))
        elif kind == "DayPlanned" and npc_id:
            self.plan[npc_id] = _steps(p["items"])
            day = datetime.fromisoformat(p["day"])
            self.planned[npc_id] += [f"My plan for {day:%A %d %B}", *p.get("goals", ()),
                                     *_told(_steps(p["outline"])), *_told(self.plan[npc_id])]
        elif kind == "PlanRevised" and npc_id:
            revised, since = _steps(p["items"]), datetime.fromisoformat(p["from_time"])
            self.plan[npc_id] = [s for s in self.plan.get(npc_id, []) if s.start < since] + revised
            told = f"I changed my plans from {since:%H:%M} ({p['reason']})"
            self.planned[npc_id] += [told, *_told(revised)]
        elif kind == "ReflectionCompleted" and npc_id:
            self.reflections[npc_id] += [i["text"] for i in p["insights"]]
        elif kind == "UtteranceSpoken" and npc_id:
            for who in (npc_id, p["listener_id"]):
                self.heard[who].append(p["text"])
        elif kind == "ConversationEnded":
            for who in p["participants"]:
                self.heard[who].append(p["summary"])

    def truth(self, npc_id: str) -> NpcTruth:
        c = self.created[npc_id]
        names = {i: n["name"] for i, n in self.created.items()}
        perceived = tuple(self.perceived[npc_id])
        return NpcTruth(
            npc_id, c["name"], c.get("occupation"), tuple(c.get("traits") or ()),
            tuple(s.strip() for s in (c.get("seed") or "").split(";") if s.strip()),
            perceived, tuple(self.plan.get(npc_id, ())), tuple(self.reflections[npc_id]),
            tuple(self.heard[npc_id]), tuple(self.planned[npc_id]),
            {p.subject: names[p.subject] for p in perceived if p.subject in names}, c.get("age"),
        )


async def read_truths(conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> dict[str, NpcTruth]:
    """Every NPC of the world by id, in event-store order (payloads read as JSON, not re-validated)."""
    facts = _Facts()
    cur = await conn.execute(
        "SELECT type, npc_id, world_time, payload FROM events WHERE in_world(tenant_id, world_id, %s, %s)"
        " AND type = ANY(%s) ORDER BY seq",
        (tenant_id, world_id, _TYPES),
    )
    async for kind, npc_id, when, payload in cur:
        facts.add(kind, npc_id, when, payload)
    return {npc_id: facts.truth(npc_id) for npc_id in facts.created}
