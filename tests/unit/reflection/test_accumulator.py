"""The importance accumulator: when a reflection becomes due, and what resets it."""

from __future__ import annotations

from services.reflection.domain import Accumulator, add_importance, complete_run, fail_run, run_key


def _feed(acc: Accumulator, importances: list[int], threshold: int = 150) -> tuple[Accumulator, list[int]]:
    runs = []
    for importance in importances:
        acc, trigger = add_importance(acc, "observation", importance, threshold=threshold)
        if trigger is not None:
            runs.append(trigger.run)
    return acc, runs


def test_reflection_runs_when_importance_sum_exceeds_150() -> None:
    acc, runs = _feed(Accumulator(), [10] * 15)
    assert acc.importance_sum == 150 and runs == []  # 150 does not exceed 150
    acc, trigger = add_importance(acc, "observation", 1)
    assert trigger is not None and (trigger.run, trigger.importance_sum, trigger.threshold) == (1, 151, 150)
    assert acc.pending_run == 1


def test_the_threshold_is_configurable() -> None:
    _, runs = _feed(Accumulator(), [5, 5, 1], threshold=10)
    assert runs == [1]


def test_no_second_run_is_triggered_while_one_is_pending() -> None:
    acc, runs = _feed(Accumulator(), [10] * 40)
    assert runs == [1]
    assert acc.importance_sum == 400 and acc.pending_run == 1


def test_completion_resets_the_sum_and_the_next_run_gets_the_next_number() -> None:
    acc, _ = _feed(Accumulator(), [10] * 20)
    acc = complete_run(acc, 1)
    assert acc == Accumulator(0, 1, None)
    acc, runs = _feed(acc, [10] * 16)
    assert runs == [2]


def test_a_stale_completion_changes_nothing() -> None:
    acc, _ = _feed(Accumulator(), [10] * 20)
    assert complete_run(acc, 7) == acc
    assert fail_run(acc, 7) == acc


def test_a_failed_run_keeps_the_sum_so_the_next_memory_triggers_a_new_run() -> None:
    acc, _ = _feed(Accumulator(), [10] * 16)
    acc = fail_run(acc, 1)
    assert acc.pending_run is None and acc.importance_sum == 160
    acc, trigger = add_importance(acc, "dialogue", 1)
    assert trigger is not None and trigger.run == 2


def test_reflections_plans_and_seeds_do_not_count() -> None:
    acc = Accumulator()
    for kind in ("reflection", "plan", "seed"):
        acc, trigger = add_importance(acc, kind, 10, threshold=5)
        assert trigger is None
    assert acc == Accumulator()


def test_counted_kinds_can_include_reflections() -> None:
    _, trigger = add_importance(Accumulator(), "reflection", 10, threshold=5,
                                  counted=frozenset({"reflection"}))
    assert trigger is not None


def test_run_keys_name_the_npc_and_the_run() -> None:
    assert run_key("t", "w", "marta", 3) == "reflection:t:w:marta:3"
