"""The load bench's capacity check: whether keeping half the town's step rate under the measured requests
fits in the machine's CPU at all (bench/_capacity.py)."""

from __future__ import annotations

from bench._capacity import GENERATOR, capacity


def test_a_saturated_two_core_run_does_not_fit_and_a_lighter_load_does() -> None:
    # A run as measured on two cores: 332 steps in a 30-s baseline on ~39.9 CPU-s (0.12 a step), then
    # 221 steps and 1,569 requests in a 60-s load on 114.9 CPU-s, 3.5 of them the load generator's.
    baseline = {"postgres": 10.0, "memory": 4.8, "tansu": 5.0, "others": 20.1, GENERATOR: 0.3}
    load = {"postgres": 21.6, "memory": 29.5, "tansu": 11.4, "others": 48.9, GENERATOR: 3.5}
    fit = capacity(baseline, load, baseline_steps=332, baseline_seconds=30, load_steps=221, load_seconds=60,
                   requests=1569, cores=2)
    assert fit.town_cpu_s_per_step == 0.1202
    assert fit.requests_cpu_s == 84.8  # 111.4 of the product's, less 221 steps' worth of the town's
    assert round(fit.cpu_ms_per_request) == 54
    assert fit.needed_cpu_s == 128.2  # 84.8 + 166 steps at 0.12 + the generator's 3.5
    assert fit.available_cpu_s == 120 and not fit.fits
    lighter = capacity(baseline, {**load, "memory": 14.0}, baseline_steps=332, baseline_seconds=30,
                       load_steps=221, load_seconds=60, requests=1569, cores=2)
    assert lighter.fits and lighter.as_dict()["fits"] is True


def test_more_cores_give_room_and_an_empty_baseline_reads_as_no_town() -> None:
    load = {"memory": 50.0, GENERATOR: 5.0}
    assert capacity({}, load, baseline_steps=0, baseline_seconds=30, load_steps=0, load_seconds=60,
                    requests=0, cores=4).as_dict() == {
        "available_cpu_s": 240.0, "used_cpu_s": 55.0, "town_cpu_s_per_step": 0.0, "requests_cpu_s": 50.0,
        "requests": 0, "needed_cpu_s": 55.0, "share": 0.5, "cpu_ms_per_request": 0.0, "fits": True}
