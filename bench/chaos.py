"""The long chaos run: every fault of the chaos suite against a live stepping town with players posting,
``--rounds`` times, then the checks (nothing owed, dead-lettered, doubled or lost).

Prints how long the town took to step again and the API to answer ``/readyz`` after each fault, then waits
until as many requests as there are players were accepted (retries of requests the fault cut go through),
and exits 1 if a check failed.
Run: ``python -m bench.chaos [--rounds 2] [--faults memory,broker,...] [--clients 1 --pause 0.5,1.5]
[--json out.json]`` (the default load is the CI test's; a fault after which the town does not step twice
within RECOVERY_S is reported and the run goes on).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from tests.chaos.checks import all_checks
from tests.chaos.harness import RECOVERY_S, WORLD, ChaosTown, Clients
from tests.chaos.test_chaos import settle

PROCESSES = ("world_state", "perception", "memory", "planning", "dialogue", "reflection", "reflection-worker",
             "webhooks", "relay", "gateway", "gateway-projection")
FAULTS = (*PROCESSES, "broker", "postgres", "postgres-frozen-15s", "replay", "fork")


def inject(town: ChaosTown, fault: str) -> str:
    """Cause ``fault``; returns what happened, for the report."""
    if fault in PROCESSES or fault == "broker":
        town.kill(fault)
        return "SIGKILL"
    if fault == "postgres":
        town.stop_postgres_abruptly()
        return "immediate shutdown"
    if fault == "postgres-frozen-15s":  # unreachable but not dead: connections hang instead of failing
        pids = _postgres_pids(town.home)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(15)
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
        return f"SIGSTOP of {len(pids)} postgres processes for 15 s"
    if fault == "replay":
        done = town.kill_cli_midway("replay", "--service", "world_state", after=2.0)
        return "killed after 2 s" if done is None else f"finished first (exit {done.returncode})"
    if fault == "fork":
        with psycopg.connect(town.database_url) as conn:
            tenant = conn.execute(
                "SELECT tenant_id FROM events WHERE world_id = %s LIMIT 1", (WORLD,)).fetchone()
        target = f"chaos-fork-{int(time.time())}"
        done = town.kill_cli_midway("fork", "--tenant", str(tenant[0] if tenant else ""), "--world", WORLD,
                                    "--at", datetime.now(UTC).isoformat(), "--new-world", target, after=1.0)
        with psycopg.connect(town.database_url) as conn:
            copied = conn.execute("SELECT count(*) FROM events WHERE world_id = %s", (target,)).fetchone()
        if done is None and copied and copied[0]:
            raise AssertionError(f"a fork killed half-way left {copied[0]} events in {target}")
        return ("killed after 1 s, nothing half-copied" if done is None
                else f"finished first (exit {done.returncode})")
    raise ValueError(f"unknown fault {fault!r} (known: {', '.join(FAULTS)})")


def _postgres_pids(home: Path) -> list[int]:
    postmaster = int((home / "pgdata" / "postmaster.pid").read_text().split()[0])
    pids = [postmaster]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[-1].split()[1]) == postmaster:  # a backend of this server (its ppid)
                pids.append(int(entry.name))
    return pids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--clients", type=int, default=1, help="players posting all along")
    parser.add_argument("--pause", default="0.5,1.5", help="each player's pause, s (min,max)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    low, high = (float(x) for x in args.pause.split(","))
    faults = [f for f in args.faults.split(",") if f]
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="npcworld-chaos-") as tmp:
        town = ChaosTown(Path(tmp) / "home")
        clients = Clients(town)
        try:
            town.start()
            clients.start(args.clients, (low, high))
            print(f"town stepping; {len(faults)} faults x {args.rounds} rounds; {args.clients} players every "
                  f"{low:g}-{high:g} s; load {os.getloadavg()[0]:.1f}", flush=True)
            for round_ in range(args.rounds):
                for fault in faults:
                    what = inject(town, fault)
                    try:
                        took: float | None = town.wait_steps(2, RECOVERY_S)
                        said = f"stepping again after {took:5.1f} s"
                    except AssertionError:
                        took, said = None, f"NOT stepping twice within {RECOVERY_S:.0f} s"
                    try:
                        api: float | None = town.wait_api(RECOVERY_S)
                        said += f", API ready after {api:5.1f} s"
                    except AssertionError:
                        api, said = None, said + f", API NOT ready within {RECOVERY_S:.0f} s"
                    before, accepted = len(clients.accepted), time.monotonic()
                    try:  # the players' requests, and retries of those the fault cut, go through again
                        clients.wait_accepted(args.clients, RECOVERY_S)
                        said += f", {args.clients} accepted {time.monotonic() - accepted:4.1f} s later"
                    except AssertionError:
                        said += f", only {len(clients.accepted) - before} accepted in {RECOVERY_S:.0f} s"
                    results.append({"round": round_ + 1, "fault": fault, "what": what, "steps_again_s": took,
                                    "api_ready_s": api, "accepted_since": len(clients.accepted) - before})
                    load = os.getloadavg()[0]
                    print(f"  round {round_ + 1} {fault:<20} {what:<40} {said}; load {load:.1f}", flush=True)
            clients.stop()
            settle(town)
            with psycopg.connect(town.database_url) as conn:
                problems = all_checks(conn, town.receiver, clients.accepted, town.database_url)
        finally:
            clients.stop()
            town.stop()
    print(f"requests accepted {len(clients.accepted)}, refused {len(clients.refused)}; "
          f"load {os.getloadavg()[0]:.1f}")
    for refusal in clients.refused[:10]:
        print(f"  refused {refusal}")
    print("checks: " + ("all hold" if not problems else "\n  " + "\n  ".join(problems)))
    if args.json:
        args.json.write_text(json.dumps({"faults": results, "accepted": len(clients.accepted),
                                         "refused": len(clients.refused), "problems": problems}, indent=2))
    stuck = [r for r in results if r["steps_again_s"] is None or r["api_ready_s"] is None]
    return 1 if problems or stuck else 0


if __name__ == "__main__":
    sys.exit(main())
