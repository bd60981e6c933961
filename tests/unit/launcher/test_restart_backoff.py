"""A process that keeps exiting is started again after 1 s, then twice as long each time, up to the operator's
cap (``npcworld run --restart-max`` / NPCWORLD_RESTART_MAX_S, default 30 s)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import launcher.process_group as process_group
from launcher.cli import main
from launcher.process_group import ProcessGroup


class _Clock:
    """Stands in for the ``time`` module the group reads, so the test decides when it is."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now


def test_restarts_wait_1_then_twice_as_long_up_to_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    monkeypatch.setattr(process_group, "time", clock)
    group = ProcessGroup({"quitter": [sys.executable, "-c", "pass"]}, {}, tmp_path, backoff_max_s=3)
    group.start()
    waits = []
    for _ in range(4):
        group.children["quitter"].wait(30)
        assert group.restart_crashed() == []  # noticed: scheduled, not yet started
        exited = clock.now
        while not group.restart_crashed():
            clock.now += 0.25
        waits.append(clock.now - exited)
    group.children["quitter"].wait(30)
    assert waits == [1.0, 2.0, 3.0, 3.0]
    assert group.restarts == {"quitter": 4}


def test_a_cap_under_a_second_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 1 s"):
        ProcessGroup({}, {}, tmp_path, backoff_max_s=0.5)
    result = CliRunner().invoke(main, ["--home", str(tmp_path), "run", "--restart-max", "0.5"])
    assert result.exit_code == 2 and "--restart-max" in result.output
    result = CliRunner().invoke(main, ["--home", str(tmp_path), "run"], env={"NPCWORLD_RESTART_MAX_S": "x"})
    assert result.exit_code == 2 and "--restart-max" in result.output and "'x'" in result.output
