"""Simulation throughput: NPC-steps per second of the Brindle Hollow town through the running pipeline.

Runs one simulation on a private embedded stack and prints its wall time and NPC-steps/s.

    .venv/bin/python bench/simulate_throughput.py --days 0.05
    .venv/bin/python bench/simulate_throughput.py --days 0.05 --only world_state,perception
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from launcher.simulation.runner import SimulationConfig, run_simulation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--template", default="brindle-hollow")
    parser.add_argument("--days", type=float, default=0.05)
    parser.add_argument("--step-seconds", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated services (default: all)")
    args = parser.parse_args()
    services = tuple(s for s in args.only.split(",") if s)
    with tempfile.TemporaryDirectory() as out:
        cfg = SimulationConfig(args.template, args.days, args.seed, args.step_seconds, Path(out), services)
        report = run_simulation(cfg)
    run, wall = report["run"], report["wall"]
    print(f"template {run['template']}  services {','.join(run['services'])}  provider {run['provider']}")
    print(f"{run['npcs']} NPCs, {run['steps']} steps ({run['step_seconds']} s): {run['npc_steps']} NPC-steps")
    print(f"wall {wall['seconds']} s  ->  {wall['npc_steps_per_second']} NPC-steps/s")
    print(f"events: {report['events']}")


if __name__ == "__main__":
    main()
