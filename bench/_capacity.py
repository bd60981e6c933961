"""Whether the load bench's step-rate target fits in the machine's CPU at all, from its own figures.

The town steps as fast as its pipeline digests a step, so on a small machine its baseline already takes much
of the CPU; the clients' requests then take CPU the town had. Keeping a share of the step rate needs the
requests' CPU plus the town's at that share to fit in what the cores give in the window. This reads both
from the CPU seconds the bench measures per process:

- the town's CPU per step: everything but the load generator in the baseline window, over its steps (an
  upper bound: the idle processes' own upkeep is counted in it);
- the requests' CPU: everything but the load generator in the load window, less the town's CPU per step
  for the steps it made meanwhile (a lower bound: work a request leaves owed at the window's end, such as
  a backlog of posted perceptions still to be remembered, is not counted);
- what the target needs: the requests' CPU, the town's at the target share of its baseline rate, and the
  load generator's (it runs on the same cores), against cores x seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["GENERATOR", "Capacity", "capacity"]

GENERATOR = "bench (load generator)"  # the load generator's own CPU, under this name in ProcessCpu


@dataclass(frozen=True)
class Capacity:
    available_cpu_s: float  # cores x the load window's seconds
    used_cpu_s: float  # every process of the machine's run, the load generator included
    town_cpu_s_per_step: float
    requests_cpu_s: float
    requests: int
    needed_cpu_s: float  # for the target share of the step rate with the same requests
    share: float

    @property
    def cpu_ms_per_request(self) -> float:
        return 1000 * self.requests_cpu_s / self.requests if self.requests else 0.0

    @property
    def fits(self) -> bool:
        return self.needed_cpu_s <= self.available_cpu_s

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"cpu_ms_per_request": round(self.cpu_ms_per_request, 1), "fits": self.fits}


def capacity(
    cpu_baseline: Mapping[str, float], cpu_load: Mapping[str, float], *, baseline_steps: int,
    baseline_seconds: float, load_steps: int, load_seconds: float, requests: int, cores: int,
    share: float = 0.5,
) -> Capacity:
    """The CPU the step-rate target needs against what ``cores`` give over ``load_seconds`` (module doc)."""
    town_base = sum(v for k, v in cpu_baseline.items() if k != GENERATOR)
    per_step = town_base / baseline_steps if baseline_steps else 0.0
    product_load = sum(v for k, v in cpu_load.items() if k != GENERATOR)
    requests_cpu = max(0.0, product_load - per_step * load_steps)
    target_steps = share * (baseline_steps / baseline_seconds) * load_seconds if baseline_seconds else 0.0
    needed = requests_cpu + per_step * target_steps + cpu_load.get(GENERATOR, 0.0)
    return Capacity(
        available_cpu_s=round(cores * load_seconds, 1),
        used_cpu_s=round(sum(cpu_load.values()), 1),
        town_cpu_s_per_step=round(per_step, 4),
        requests_cpu_s=round(requests_cpu, 1),
        requests=requests,
        needed_cpu_s=round(needed, 1),
        share=share,
    )
