"""The simulation report: metrics assembled from a world's facts, as JSON and as Markdown (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from itertools import combinations
from typing import Any

from launcher.simulation.metrics import (
    Conversation,
    LlmCall,
    Sighting,
    acquaintances_from_seeds,
    attendance,
    density,
    diffusion,
    llm_usage,
    mutual_edges,
)

__all__ = ["WorldFacts", "build_report", "comparable", "to_markdown"]


@dataclass
class WorldFacts:
    """What the event log says about one simulated world."""

    world_id: str
    names: dict[str, str]
    seeds: dict[str, str]
    conversations: list[Conversation] = field(default_factory=list)
    relationships: set[tuple[str, str]] = field(default_factory=set)
    sightings: list[Sighting] = field(default_factory=list)
    llm_calls: list[LlmCall] = field(default_factory=list)
    steps: int = 0
    world_start: datetime | None = None
    world_end: datetime | None = None
    event_counts: dict[str, int] = field(default_factory=dict)


def _story(facts: WorldFacts, keywords: list[str]) -> dict[str, Any]:
    d = diffusion(facts.seeds, facts.conversations, keywords)
    n = max(len(facts.names), 1)
    return {
        "keywords": keywords,
        "start": len(d.start),
        "end": len(d.end),
        "start_pct": round(100 * len(d.start) / n, 1),
        "end_pct": round(100 * len(d.end) / n, 1),
        "knew_at_start": sorted(d.start),
        "knows_at_end": sorted(d.end),
        "chains": {npc: " → ".join(chain) for npc, chain in sorted(d.chains.items()) if len(chain) > 1},
    }


def build_report(
    facts: WorldFacts, stories: dict[str, dict[str, Any]], run: dict[str, Any], wall_seconds: float
) -> dict[str, Any]:
    """Every metric of the report, computed from ``facts``; ``run`` describes what was simulated."""
    npcs = sorted(facts.names)
    start_knows = acquaintances_from_seeds(facts.names, facts.seeds)
    talked = {(a, b) for c in facts.conversations for a, b in combinations(c.participants, 2)}
    end_knows = start_knows | talked | {(b, a) for a, b in talked} | facts.relationships
    days = float(run.get("days", 1))
    report: dict[str, Any] = {
        "run": {
            **run,
            "npcs": len(npcs),
            "steps": facts.steps,
            "npc_steps": facts.steps * len(npcs),
            "world_start": facts.world_start.isoformat() if facts.world_start else None,
            "world_end": facts.world_end.isoformat() if facts.world_end else None,
        },
        "information_diffusion": {
            name: _story(facts, list(s["keywords"])) for name, s in sorted(stories.items())
        },
        "network_density": {
            "start": round(density(npcs, start_knows), 3),
            "end": round(density(npcs, end_knows), 3),
            "edges_start": len(mutual_edges(npcs, start_knows)),
            "edges_end": len(mutual_edges(npcs, end_knows)),
        },
        "conversations": len(facts.conversations),
        "events": dict(sorted(facts.event_counts.items())),
        "llm": llm_usage(facts.llm_calls, len(npcs), days),
    }
    party = stories.get("party")
    if party:
        start, end = datetime.fromisoformat(party["start"]), datetime.fromisoformat(party["end"])
        reached = facts.world_end is not None and facts.world_end >= end
        came = (
            attendance(facts.sightings, start, end, f"{facts.world_id}:{party['place']}")
            if reached
            else set()
        )
        knew = set(report["information_diffusion"]["party"]["knows_at_end"]) - {party.get("host")}
        report["party"] = {
            "place": party["place"],
            "start": party["start"],
            "end": party["end"],
            "window_simulated": reached,
            "attended": sorted(came),
            "invited": len(knew),
            "invited_and_came": len(knew & came),
        }
    npc_steps = report["run"]["npc_steps"]
    report["wall"] = {
        "seconds": round(wall_seconds, 1),
        "npc_steps_per_second": round(npc_steps / wall_seconds, 1) if wall_seconds > 0 else None,
    }
    return report


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without wall-time and table-size figures: what two runs with the same seed must agree on
    (table sizes move by a few pages with vacuum timing)."""
    return {k: v for k, v in report.items() if k not in ("wall", "storage")}


def to_markdown(report: dict[str, Any]) -> str:
    run, dens = report["run"], report["network_density"]
    lines = [
        f"# Simulation report: {run.get('template')} (seed {run.get('seed')})",
        "",
        f"{run['npcs']} NPCs, {run.get('days')} simulated day(s) at {run.get('step_seconds')} s steps: "
        f"{run['steps']} steps, {run['npc_steps']} NPC-steps ({run['world_start']} → {run['world_end']}).",
        f"Services running: {', '.join(run.get('services', [])) or 'n/a'}.",
        "",
        "## Information diffusion (by conversation provenance)",
        "",
        "| fact | knew at start | knows at end |",
        "|---|---|---|",
    ]
    for name, s in report["information_diffusion"].items():
        lines.append(f"| {name} | {s['start']} ({s['start_pct']}%) | {s['end']} ({s['end_pct']}%) |")
    lines += [
        "",
        "## Relationship network density",
        "",
        f"η start {dens['start']} ({dens['edges_start']} edges) → "
        f"end {dens['end']} ({dens['edges_end']} edges); "
        f"{report['conversations']} conversations.",
        "",
    ]
    if "party" in report:
        p = report["party"]
        when = "" if p["window_simulated"] else " (the party window was not reached by this run)"
        lines += [
            "## The party",
            "",
            f"{p['place']}, {p['start']} → {p['end']}{when}: "
            f"{len(p['attended'])} NPCs present ({', '.join(p['attended']) or 'none'}); "
            f"{p['invited_and_came']} of {p['invited']} who knew of it came.",
            "",
        ]
    lines += [
        "## LLM calls and tokens per NPC per simulated day",
        "",
        "Prompt tokens marked *estimate* are the prompt text's length over 4 characters per token (the "
        "provider counted none: the offline provider).",
        "",
        "| prompt kind | calls | tokens | calls/NPC/day | tokens/NPC/day | prompt tokens/NPC/day |",
        "|---|---|---|---|---|---|",
    ]
    for kind, u in report["llm"].items():
        estimate = " (estimate)" if u.get("prompt_tokens_estimated") else ""
        lines.append(
            f"| {kind} | {u['calls']} | {u['tokens']} | {u['calls_per_npc_day']} "
            f"| {u['tokens_per_npc_day']} | {u.get('prompt_tokens_per_npc_day', 0)}{estimate} |"
        )
    if "storage" in report:
        st = report["storage"]
        largest = ", ".join(f"{t} {mb}" for t, mb in st["largest_tables_mb_per_npc_day"].items())
        lines += ["", "## Storage per NPC per simulated day", "",
                  f"{st['mb_per_npc_day']} MB per NPC-day ({st['mb']} MB in all; largest tables, MB per"
                  f" NPC-day: {largest or 'none'})."]
    wall = report["wall"]
    rotations = wall.get("broker_rotations")
    rotated = f" The embedded broker was replaced {rotations} times." if rotations else ""
    rate = f"{wall['seconds']} s, {wall['npc_steps_per_second']} NPC-steps/s.{rotated}"
    lines += ["", "## Wall time", "", rate, ""]
    return "\n".join(lines)
