"""The simulation report of a run's stack, however far the run got, plus a check of gossip provenance.

``python -m bench.town_report DIR [--template brindle-hollow] [--json FILE]`` reads the event log of the
stack ``npcworld simulate --out DIR`` left (or is still writing: the report covers the world time reached)
and prints the report's figures. A run that has ended left its Postgres stopped: it is started for the
report and stopped again afterwards. It adds what the report itself does not measure:

- **gossip provenance**: every claim a conversation line quotes from someone (``X told me: "…"``,
  ``… said: "…"``) must be in a memory the speaker had when it spoke; a quoted claim with no such memory is
  hallucinated gossip.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg

from launcher.embedded.postgres import postgres_pid, start_postgres, stop_postgres
from launcher.simulation.eventlog import read_facts
from launcher.simulation.gossip import gossip_provenance
from launcher.simulation.report import build_report
from npcworld.templates import load_template


async def town_report(home: Path, template: str) -> dict[str, Any]:
    """The report of the stack under ``home`` (``DIR`` of ``npcworld simulate --out DIR``)."""
    url = f"postgresql://postgres:@/postgres?host={home / 'stack' / 'pgdata'}"
    async with await psycopg.AsyncConnection.connect(url) as conn:
        row = await (await conn.execute("SELECT tenant_id, world_id FROM ws_worlds LIMIT 1")).fetchone()
        if row is None:
            raise SystemExit(f"no world in {home} yet")
        tenant, world = row
        facts = await read_facts(conn, tenant, world)
        days = 0.0
        if facts.world_start and facts.world_end:
            days = round((facts.world_end - facts.world_start) / timedelta(days=1), 3)
        run = {"template": template, "days": days, "step_seconds": 10}
        report = build_report(facts, load_template(template).stories, run, 0.0)
        report["gossip_provenance"] = await gossip_provenance(conn, world)
    report.pop("wall", None)
    return report


def _summary(report: dict[str, Any]) -> str:
    run, dens, gossip = report["run"], report["network_density"], report["gossip_provenance"]
    out = [f"world time {run['world_start']} → {run['world_end']} ({run['days']} days, {run['steps']} steps)"]
    for name, story in report["information_diffusion"].items():
        known = f"{story['start']} → {story['end']} of {run['npcs']}"
        out.append(f"{name}: known by {known} ({story['end_pct']} %)")
    edges = f"{dens['edges_start']} → {dens['edges_end']} edges"
    out.append(f"density {dens['start']} → {dens['end']} ({edges}), {report['conversations']} conversations")
    party = report.get("party")
    if party:
        out.append(f"party window simulated: {party['window_simulated']}; attended {party['attended']}; "
                   f"{party['invited_and_came']} of {party['invited']} who knew came")
    calls = report["llm"].get("all", {})
    out.append(f"LLM calls per NPC-day: {calls.get('calls_per_npc_day')} "
               + str({k: v["calls_per_npc_day"] for k, v in report["llm"].items() if k != "all"}))
    out.append(f"gossip: {gossip['quoted_claims']} quoted claims in {gossip['lines']} lines, "
               f"{gossip['without_a_memory']} without a memory of the speaker")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path, help="the --out DIR of npcworld simulate")
    parser.add_argument("--template", default="brindle-hollow")
    parser.add_argument("--json", type=Path, help="also write the whole report here")
    args = parser.parse_args()
    pgdata = args.home / "stack" / "pgdata"
    if not (pgdata / "PG_VERSION").exists():
        parser.error(f"{args.home} holds no simulation stack (no {pgdata})")
    stopped = postgres_pid(pgdata) is None  # the run has ended: its database is started for the report
    if stopped:
        start_postgres(pgdata)
    try:
        report = asyncio.run(town_report(args.home, args.template))
    finally:
        if stopped:
            stop_postgres(pgdata)
    print(_summary(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
