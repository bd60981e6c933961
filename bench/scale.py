"""Scale runs: generated towns (``town-<npcs>-<seed>``) of 25, 100, 250 and 1,000 NPCs, stepped and live.

Run: python -m bench.scale [--npcs 25,100,250,1000] [--modes stepped,live] [--hours 0.25]
                           [--live-seconds 120] [--speed 1] [--focus K] [--seed 1] [--json FILE]

Each run has a private embedded stack (its own Postgres and broker on a free port) and every service process,
and creates the town as ``npcworld simulate`` does. **Stepped** resumes the clock stepped, as ``simulate``
does (each step starts once the pipeline has digested the previous one; the broker is replaced every 20,000
events), for ``--hours`` of world time. **Live** runs the clock in real time (``--speed`` world seconds per
wall second, 10 s steps) for ``--live-seconds`` of wall time, then pauses it and times how long the pipeline
still needs to digest what was ticked (a real-time clock ticks on whether or not the pipeline keeps up, so
this lag is what says whether it did). ``--focus M`` turns level of detail on: the clock's focus is the
homes of the town's first M NPCs (as if players stood in those households), so NPCs elsewhere run coarse
until they walk in; the report gives how many NPCs the ticks had in full detail. Measured from just before
the clock starts (the town loaded and the pipeline quiet) to the last step: NPC-steps/s, the real-time factor
(world seconds per wall second; a live run at speed 1 keeps up when it is 1), CPU used per process (from
/proc, as a share of one core), events stored per NPC-step, LLM calls per NPC per simulated day by prompt kind
(the ``llm_calls`` table) and storage per NPC-day (growth of every table's size), with the load average at the
start and the end beside them: other work on the machine skews every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench._scale_watch import figures, snapshot
from launcher.embedded import EmbeddedStack
from launcher.embedded.broker import DEFAULT_ROTATE_EVENTS
from launcher.embedded.rotation import BrokerRotation
from launcher.instances import instance_name
from launcher.private_ports import free_port, private_api_env
from launcher.supervisor import SERVICE_MODULES, ProcessGroup, process_commands, rotate_group_broker
from npcworld.contracts import ClockChanged, EventPayload, WorldCreated
from npcworld.db import open_pool
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.fork import world_stream
from npcworld.templates import load_template
from npcworld.templates.generator import generated_name

STEP_SECONDS = 10.0


def run(
    npcs: int, seed: int, speed: float | None, span: float, work: Path, focus: int = 0
) -> dict[str, Any]:
    """One town on a private stack: stepped (``speed`` None) for ``span`` world seconds, or live for
    ``span`` wall seconds; ``focus`` > 0 focuses the clock on the homes of the first ``focus`` NPCs."""
    home = work / "stack"
    stack = EmbeddedStack(home, kafka_port=free_port())
    state = stack.up()
    env = {
        **state.client_env(dict(os.environ)),
        **private_api_env(),  # as npcworld simulate: the stack is private, so are its internal APIs
        "NPCWORLD_SEED": str(seed),
        "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
    }
    group = ProcessGroup(process_commands(None), env, home / "logs")
    group.start()
    try:
        town = _Town(npcs, seed, state.database_url, home, group, stack)
        return asyncio.run(town.measure(speed, span, focus))
    finally:
        group.stop()
        stack.down()


async def _append(conn: Any, stream: str, payload: EventPayload, tenant: str, world: str, when: Any) -> None:
    uow = UnitOfWork(conn, EventStore())
    await uow.append(stream, [uow.new_event(payload, tenant_id=tenant, world_id=world, world_time=when)])


class _Town:
    """Creates the town, waits for it to load and the pipeline to go quiet, starts the clock and measures."""

    def __init__(
        self, npcs: int, seed: int, url: str, home: Path, group: ProcessGroup, stack: EmbeddedStack
    ) -> None:
        self.npcs, self.url, self.home, self.group, self.stack = npcs, url, home, group, stack
        self.name = generated_name(npcs, seed)
        self.world = f"scale-{self.name}"
        self.rotation = BrokerRotation(DEFAULT_ROTATE_EVENTS)

    async def measure(self, speed: float | None, span: float, focus: int = 0) -> dict[str, Any]:
        from services.gateway.repository import GatewayRepository
        from services.world_state.quiescence import PipelineProbe

        template = load_template(self.name)
        start = template.start_time
        homes = dict.fromkeys(p.location.split(":")[0] for p in template.npcs[:focus] if p.location)
        places = tuple(f"{self.world}:{home}" for home in homes) or None
        pool = await open_pool(self.url, max_size=3, name="scale")
        try:
            async with pool.connection() as conn, conn.transaction():
                tenant, _ = await GatewayRepository(conn).create_tenant("scale")
                created = WorldCreated(name=self.world, template=self.name, start_time=start)
                await _append(conn, world_stream(self.world), created, tenant, self.world, start)
            await self._until(pool, "SELECT count(*) FROM ws_clocks WHERE world_id = %s", self.world, 1, 900)
            services = [s for s in SERVICE_MODULES if instance_name(s, 1) in self.group.commands]
            sql = "SELECT count(DISTINCT consumer) FROM consumer_heartbeats WHERE consumer = ANY(%s)"
            await self._until(pool, sql, services, len(services), 300)
            await PipelineProbe(pool).wait_idle(900)
            first = snapshot(self.url, self.home, os.getpid())
            steps = round(span / STEP_SECONDS)
            until = start + timedelta(seconds=steps * STEP_SECONDS) if speed is None else None
            async with pool.connection() as conn, conn.transaction():
                resume = ClockChanged(paused=False, speed=speed, step_seconds=STEP_SECONDS, until=until,
                                      focus=places)
                await _append(conn, f"clock-ops-{self.world}", resume, tenant, self.world, start)
            if speed is None:
                sql = "SELECT step FROM ws_clocks WHERE world_id = %s"
                await self._until(pool, sql, self.world, steps, 86400, rotate=True)
            else:
                end = time.monotonic() + span
                while time.monotonic() < end:
                    self.group.restart_crashed()
                    await asyncio.sleep(min(1.0, max(0.0, end - time.monotonic())))
            last = snapshot(self.url, self.home, os.getpid())
            lag = None
            if speed is not None:  # a real-time clock ticks on regardless: how long the pipeline still needs
                async with pool.connection() as conn, conn.transaction():
                    stop = ClockChanged(paused=True, speed=speed, step_seconds=STEP_SECONDS)
                    await _append(conn, f"clock-ops-{self.world}", stop, tenant, self.world, start)
                if await PipelineProbe(pool).wait_idle(600):  # None: not digested after 10 minutes
                    lag = round(time.monotonic() - last.at, 1)
            detail = await _in_detail(pool, self.world) if places else None
            lateness = await _lateness(pool, self.world) if speed is not None else None
        finally:
            await pool.close()
        out = figures(self.npcs, STEP_SECONDS, first, last)
        out["broker_rotations"] = len(self.rotation.rotations)
        if places:
            out["focus_homes"], out["npcs_in_detail"] = len(places), detail
        if speed is not None:
            out["speed"], out["steps_due"], out["lag_seconds"] = speed, int(span * speed / STEP_SECONDS), lag
            out["tick_lateness_seconds"] = lateness
        return out

    async def _until(
        self, pool: Any, sql: str, param: Any, target: int, timeout: float, rotate: bool = False
    ) -> None:
        """Poll ``sql`` until it reaches ``target``, restarting crashed processes (and, on long stepped
        runs, replacing the embedded broker as npcworld simulate does)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            async with pool.connection() as conn:
                row = await (await conn.execute(sql, (param,))).fetchone()
            if row and row[0] is not None and int(row[0]) >= target:
                return
            self.group.restart_crashed()
            if rotate and await self.rotation.due(pool):
                self.rotation.rotations.append(await rotate_group_broker(pool, self.stack, self.group))
            await asyncio.sleep(0.5)
        raise TimeoutError(f"not done after {timeout} s: {sql}")


async def _in_detail(pool: Any, world: str) -> dict[str, float]:
    """How many NPCs the world's ticks had in full detail: fewest, mean and most over the ticks."""
    sql = ("SELECT min(n), avg(n), max(n) FROM"
           " (SELECT jsonb_array_length(payload -> 'detail') AS n FROM events WHERE world_id = %s"
           "  AND type = 'WorldTicked' AND jsonb_typeof(payload -> 'detail') = 'array') t")
    async with pool.connection() as conn:
        row = await (await conn.execute(sql, (world,))).fetchone()
    if row is None or row[0] is None:
        return {}
    return {"min": int(row[0]), "mean": round(float(row[1]), 1), "max": int(row[2])}


async def _lateness(pool: Any, world: str) -> dict[str, float]:
    """How long after its due time each tick of a real-time clock was made (its ``recorded_at`` against its
    ``due_at``): mean and most, over the ticks."""
    sql = ("SELECT count(*), avg(late), max(late) FROM"
           " (SELECT extract(epoch FROM recorded_at) - (payload ->> 'due_at')::float8 AS late FROM events"
           "  WHERE world_id = %s AND type = 'WorldTicked' AND payload ->> 'due_at' IS NOT NULL) t")
    async with pool.connection() as conn:
        row = await (await conn.execute(sql, (world,))).fetchone()
    if row is None or not row[0]:
        return {}
    return {"ticks": int(row[0]), "mean": round(float(row[1]), 3), "max": round(float(row[2]), 3)}


def _line(label: str, values: dict[str, Any]) -> str:
    return f"  {label}: " + ", ".join(f"{k} {v}" for k, v in values.items())


def show(mode: str, r: dict[str, Any]) -> None:
    load = r["load_average"]
    print(f"{r['npcs']} NPCs {mode}: {r['steps']} steps ({r['world_seconds']:.0f} world s) "
          f"in {r['wall_seconds']} s"
          f"  [load average {' '.join(f'{x:.2f}' for x in load['start'])} -> "
          f"{' '.join(f'{x:.2f}' for x in load['end'])}]")
    due = ""
    if "steps_due" in r:
        due = f" (steps due {r['steps_due']}, then {r['lag_seconds']} s to digest them)"
    print(f"  NPC-steps/s {r['npc_steps_per_second']}  real-time factor {r['realtime_factor']}{due}  "
          f"events per NPC-step {r['events_per_npc_step']}  CPU cores used {r['cpu_cores_used']}")
    if "npcs_in_detail" in r:
        print(_line(f"level of detail: focus on {r['focus_homes']} homes, NPCs in full detail per tick",
                    r["npcs_in_detail"]))
    if r.get("tick_lateness_seconds"):
        print(_line("ticks made after their due time (s)", r["tick_lateness_seconds"]))
    print(f"  storage MB per NPC-day {r['storage_mb_per_npc_day']} ({r['storage_mb']} MB in all)")
    print(_line("largest tables (MB per NPC-day)", r["largest_tables_mb_per_npc_day"]))
    print(_line("LLM calls per NPC-day", r["llm_calls_per_npc_day"]))
    print(_line("CPU (share of one core)", r["cpu_share_of_one_core"]), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--npcs", default="25,100,250,1000", help="comma-separated town sizes")
    parser.add_argument("--modes", default="stepped,live", help="stepped, live or both")
    parser.add_argument("--hours", type=float, default=0.25, help="world hours of each stepped run")
    parser.add_argument("--live-seconds", type=float, default=120, help="wall seconds of each live run")
    parser.add_argument("--speed", type=float, default=1.0, help="live clock: world seconds per wall second")
    parser.add_argument("--focus", type=int, default=0,
                        help="level of detail: focus the clock on the homes of the first M NPCs (0: off)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write every run's figures here")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if set(modes) - {"stepped", "live"}:
        parser.error("--modes takes stepped and/or live")
    results: list[dict[str, Any]] = []
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores",
          flush=True)
    for npcs in (int(n) for n in args.npcs.split(",") if n):
        for mode in modes:
            with tempfile.TemporaryDirectory(prefix=f"scale-{npcs}-{mode}-") as tmp:
                if mode == "stepped":
                    r = run(npcs, args.seed, None, args.hours * 3600, Path(tmp), args.focus)
                else:
                    r = run(npcs, args.seed, args.speed, args.live_seconds, Path(tmp), args.focus)
            show(mode, r)
            results.append({"mode": mode, "template": generated_name(npcs, args.seed), **r})
            if args.json:
                args.json.write_text(json.dumps(results, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
