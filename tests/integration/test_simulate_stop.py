"""However `npcworld simulate` ends — SIGTERM (a CI timeout, `docker stop`), SIGKILL — nothing of its private
stack keeps running, and the next run on the same directory starts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from launcher.embedded.procs import processes_of
from launcher.supervisor import SERVICE_MODULES
from tests.runs import assert_nothing_left


def _simulate(out: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "KAFKA_BOOTSTRAP_SERVERS")}
    return subprocess.Popen(
        [sys.executable, "-m", "launcher.cli", "simulate", "--days", "1", "--out", str(out)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )


def _wait_for_services(proc: subprocess.Popen[str], home: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while len(processes_of(home)) < len(SERVICE_MODULES) + 2:  # services, the relay, the broker
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, f"services did not start within {timeout:.0f} s"
        time.sleep(0.2)


def test_a_killed_simulation_is_cleaned_up_and_a_terminated_one_stops_its_stack(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    home = out / "stack"
    first = _simulate(out)
    _wait_for_services(first, home)
    first.kill()  # SIGKILL: the run's guardian stops its services, broker and Postgres
    first.communicate()
    assert_nothing_left(home, timeout=60)

    second = _simulate(out)  # the same directory: starts afresh
    _wait_for_services(second, home)
    second.send_signal(signal.SIGTERM)
    output, _ = second.communicate(timeout=90)
    assert second.returncode == 130, f"exit {second.returncode}: {output}"
    assert "stopped: no report" in output and "Traceback" not in output, output
    assert_nothing_left(home, timeout=5)  # stopped before it exited, not by the guardian afterwards
