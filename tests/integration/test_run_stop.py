"""However `npcworld run` ends, nothing of its data dir keeps running, and the next run starts normally."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.runs import Run, assert_nothing_left, assert_stopped_quietly


@pytest.mark.parametrize("moment", ["stack starting", "services starting", "demo town being created"])
def test_ctrl_c_during_start_up_stops_quietly_and_leaves_nothing_running(tmp_path: Path, moment: str) -> None:
    home = tmp_path / "home"
    run = Run(home, *(() if moment == "demo town being created" else ("--no-demo",)))
    if moment == "stack starting":  # signal handlers are in place once the run holds its lock
        deadline = time.monotonic() + 60
        while not (home / "run.lock").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    else:
        run.wait_for("embedded stack up" if moment == "services starting" else "API on")
    run.signal_group(signal.SIGINT)
    assert_stopped_quietly(run, home)


def test_a_second_signal_while_stopping_forces_a_complete_stop(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run = Run(home)
    run.wait_for("API on")
    run.signal_group(signal.SIGINT)
    run.wait_for("stopping")
    run.signal_group(signal.SIGTERM)
    assert_stopped_quietly(run, home)
    assert "stopping at once" in run.output()


def test_a_killed_supervisor_leaves_nothing_behind_and_the_next_run_starts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = Run(home, "--no-demo")
    first.wait_for(r"processes up: \d+/\d+")
    second = subprocess.run(
        [sys.executable, "-m", "launcher.cli", "--home", str(home), "run", "--no-demo"],
        capture_output=True, text=True, timeout=60,
    )
    assert second.returncode != 0 and f"(pid {first.proc.pid}) is already running" in second.stderr
    first.proc.kill()  # SIGKILL: no chance to clean up; the run's guardian does it
    first.finish()
    assert_nothing_left(home, timeout=60)
    again = Run(home, "--no-demo")
    again.wait_for(r"processes up: \d+/\d+ .*postgres up .*kafka up")
    again.signal_group(signal.SIGINT)
    assert_stopped_quietly(again, home)
