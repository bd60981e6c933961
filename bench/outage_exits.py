"""Does any process exit when Postgres or the broker blinks? A live stepping town (the chaos harness) meets
Postgres stopped abruptly, Postgres frozen for 15 s and the broker killed (it comes back empty); after each,
this prints how long the clock took to step again and which supervised processes had to be restarted
(the answer should be none: each one reconnects with backoff by itself).

Run: ``python -m bench.outage_exits [--faults postgres,postgres-frozen-15s,broker] [--keep-logs DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench.chaos import inject
from tests.chaos.harness import RECOVERY_S, ChaosTown, Clients


def restarts(town: ChaosTown) -> dict[str, int]:
    """Restarts so far of each supervised process (from the run's state file)."""
    state = json.loads((town.home / "run.json").read_text())
    return {p["name"]: int(p["restarts"]) for p in state["processes"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", default="postgres,postgres-frozen-15s,broker")
    parser.add_argument("--keep-logs", type=Path, default=None, help="copy the run's logs here on a failure")
    args = parser.parse_args()
    exited_total = 0
    with tempfile.TemporaryDirectory(prefix="npcworld-outage-") as tmp:
        town = ChaosTown(Path(tmp) / "home")
        clients = Clients(town)
        try:
            town.start()
            clients.start()
            town.wait_steps(3, 600)  # past the first steps, which plan every NPC's day (slow)
            print(f"town stepping; load {os.getloadavg()[0]:.1f}", flush=True)
            for fault in args.faults.split(","):
                before = restarts(town)
                what = inject(town, fault)
                took = town.wait_steps(2, RECOVERY_S)
                town.wait_steps(1, RECOVERY_S)  # a restart after a crash would show by now
                exited = {n: c - before.get(n, 0) for n, c in restarts(town).items() if c > before.get(n, 0)}
                exited_total += sum(exited.values())
                print(f"  {fault:<20} {what:<40} stepping again after {took:5.1f} s; "
                      f"processes restarted: {exited or 'none'}; load {os.getloadavg()[0]:.1f}", flush=True)
        except AssertionError:
            if args.keep_logs is not None:
                shutil.copytree(town.home / "logs", args.keep_logs, dirs_exist_ok=True)
            raise
        finally:
            clients.stop()
            town.stop()
    print(f"requests accepted {len(clients.accepted)}, refused {len(clients.refused)}")
    return 1 if exited_total else 0


if __name__ == "__main__":
    sys.exit(main())
