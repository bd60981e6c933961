"""The chaos harness: a live `npcworld run` with its demo town stepping and clients posting, and the faults
an operator meets (processes killed, Postgres stopped abruptly, the broker killed and so wiped, a replay or a
fork killed half-way); `checks.py` then says whether anything was lost, doubled or left owed.

Used by `tests/chaos/` (a short subset runs in CI) and by `bench/chaos.py` (every fault, repeatedly).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg

from tests.e2e.receiver import Receiver
from tests.runs import Run, assert_stopped_quietly

WORLD = "brindle-hollow"
NPCS = ("marta", "tobias", "helene", "ines", "dmitri", "priya", "kofi", "adaeze", "chidi", "lars")
_START = "2023-02-13T07:00:00+00:00"
RECOVERY_S = 60.0  # the clock steps twice within this long after a fault
# The first steps plan every NPC's day: faults come after them, so the figures are about healing.
_WARM_STEPS = 4
# How long a player retries one request (a gateway killed again and again restarts after a growing backoff).
_RETRY_S = 120.0


class ChaosTown:
    """The demo town under `npcworld run` in a private data dir, plus what the faults need to reach it."""

    def __init__(self, home: Path, *run_args: str) -> None:
        """``run_args`` go to `npcworld run` (e.g. ``--instances memory=2``)."""
        self.home = home
        # The receiver is on 127.0.0.1, which the webhook egress policy refuses unless allowed; the run's
        # gateway and dispatcher inherit this (bench/chaos.py runs without tests/conftest.py).
        os.environ.setdefault("WEBHOOK_ALLOW_HOSTS", "127.0.0.1")
        self.run = Run(home, *run_args)
        self.receiver = Receiver(fail_first=0).start()

    def start(self, timeout: float = 240) -> None:
        """Wait until the town has made its first steps, then subscribe the local webhook receiver."""
        self.run.wait_for("API on", timeout)
        self.wait_steps(_WARM_STEPS, timeout)
        with self.client() as client:
            client.post(f"/v1/worlds/{WORLD}/webhooks", json={
                "url": f"{self.receiver.url}/ok", "event_types": ["ObservationMade", "NpcReplied"],
            }).raise_for_status()

    def stop(self) -> None:
        """Ctrl-C the run (it must stop quietly and leave nothing running) and close the receiver."""
        try:
            self.run.signal_group(signal.SIGINT)
            assert_stopped_quietly(self.run, self.home)
        finally:
            self.receiver.stop()

    @property
    def database_url(self) -> str:
        return str(json.loads((self.home / "stack.json").read_text())["database_url"])

    def client(self) -> httpx.Client:
        key = (self.home / "demo-api-key").read_text().strip()
        return httpx.Client(base_url=f"http://127.0.0.1:{self.run.port}", timeout=30,
                            headers={"Authorization": f"Bearer {key}"})

    def step(self) -> int:
        """The town's clock step, or -1 while it cannot be read (Postgres down, town not loaded)."""
        try:
            with psycopg.connect(self.database_url, connect_timeout=3) as conn:
                row = conn.execute("SELECT step FROM ws_clocks WHERE world_id = %s", (WORLD,)).fetchone()
        except (psycopg.Error, FileNotFoundError, KeyError):
            return -1
        return int(row[0]) if row else -1

    def wait_steps(self, steps: int, timeout: float = RECOVERY_S) -> float:
        """Seconds until the clock moved ``steps`` steps past where it is now (asserts it does in time)."""
        began, start = time.monotonic(), self.step()
        while time.monotonic() - began < timeout:
            if start >= 0 and self.step() >= start + steps:
                return time.monotonic() - began
            start = start if start >= 0 else self.step()
            time.sleep(0.5)
        raise AssertionError(f"the clock did not step {steps} times within {timeout:.0f} s "
                             f"(step {self.step()}):\n{self.run.output()}")

    def wait_api(self, timeout: float = RECOVERY_S) -> float:
        """Seconds until the gateway answers ``/readyz`` with 200 (asserts it does in time)."""
        began = time.monotonic()
        with httpx.Client(base_url=f"http://127.0.0.1:{self.run.port}", timeout=5) as client:
            while time.monotonic() - began < timeout:
                try:
                    if client.get("/readyz").status_code == 200:
                        return time.monotonic() - began
                except httpx.HTTPError:
                    pass
                time.sleep(0.25)
        raise AssertionError(f"the API did not answer /readyz within {timeout:.0f} s:\n{self.run.output()}")

    # -- faults ------------------------------------------------------------------------------------------

    def pid_of(self, name: str) -> int:
        """The pid of a supervised child (from the run's state file, once it shows the child up)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                state = json.loads((self.home / "run.json").read_text())
            except (FileNotFoundError, ValueError):
                state = {"processes": []}
            pid = next((p["pid"] for p in state["processes"] if p["name"] == name and p["up"]), None)
            if pid:
                return int(pid)
            time.sleep(0.2)
        raise AssertionError(f"{name} is not up")

    def kill(self, name: str) -> None:
        """SIGKILL one supervised child, or ``broker`` (memory storage: a killed broker comes back empty)."""
        pid = int((self.home / "tansu.pid").read_text()) if name == "broker" else self.pid_of(name)
        os.kill(pid, signal.SIGKILL)

    def stop_postgres_abruptly(self) -> None:
        """Immediate shutdown, as ``pg_ctl stop -m immediate`` does (no checkpoint; recovery on start)."""
        pid = int((self.home / "pgdata" / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGQUIT)

    def kill_cli_midway(self, *args: str, after: float) -> subprocess.CompletedProcess[str] | None:
        """Run ``npcworld ARGS`` against the live stack and SIGKILL it ``after`` seconds (None if it had
        finished by then: the fault did not happen)."""
        env = {**os.environ, "DATABASE_URL": self.database_url, "NPCWORLD_HOME": str(self.home)}
        proc = subprocess.Popen([sys.executable, "-m", "launcher.cli", *args], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            out, _ = proc.communicate(timeout=after)
            return subprocess.CompletedProcess(proc.args, proc.returncode, out, "")
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return None


@dataclass
class Clients:
    """Players posting perceptions and chats all along; each accepted request carries a unique token (a
    refused one is kept with its answer)."""

    town: ChaosTown
    accepted: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self, count: int = 3, pause: tuple[float, float] = (0.2, 0.6)) -> Clients:
        """``count`` players, each sending one request every ``pause`` seconds (uniformly drawn)."""
        for n in range(count):
            thread = threading.Thread(target=self._play, args=(random.Random(n), pause), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(60)

    def _play(self, rng: random.Random, pause: tuple[float, float]) -> None:
        with self.town.client() as client:
            while not self._stop.wait(rng.uniform(*pause)):
                self._send(client, rng)

    def _send(self, client: httpx.Client, rng: random.Random) -> None:
        token, npc = f"chaos-{uuid.uuid4().hex[:12]}", rng.choice(NPCS)
        chat = rng.random() < 0.3
        path = f"/v1/worlds/{WORLD}/npcs/{npc}/" + ("chat" if chat else "perceptions")
        body: dict[str, object] = (
            {"player_id": "chaos", "text": f"Any news? [{token}]", "wait": False} if chat
            else {"description": f"a cart rolls by [{token}]", "world_time": self._now(client)})
        last = "nothing"
        deadline = time.monotonic() + _RETRY_S
        while time.monotonic() < deadline:  # retried with the same Idempotency-Key while the backend heals
            try:
                answer = client.post(path, json=body, headers={"Idempotency-Key": token})
                last = f"{answer.status_code} {answer.text[:200]}"
            except httpx.HTTPError as exc:
                answer, last = None, repr(exc)
            if answer is not None and answer.status_code < 500 and not _in_progress(answer):
                if answer.status_code in (200, 201, 202):
                    self.accepted.append(token)
                else:
                    self.refused.append(f"{token}: {answer.status_code} {answer.text[:300]}")
                return
            if self._stop.wait(1.0):
                break
        self.refused.append(f"{token}: no answer below 500 within {_RETRY_S:.0f} s or before the stop"
                            f" (the last: {last})")

    def wait_accepted(self, more: int, timeout: float) -> None:
        """Wait until ``more`` requests beyond those accepted so far are accepted (asserts they are)."""
        target, deadline = len(self.accepted) + more, time.monotonic() + timeout
        while len(self.accepted) < target and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len(self.accepted) >= target, (
            f"{len(self.accepted)} requests accepted, {target} expected within {timeout:.0f} s;"
            f" refused: {self.refused[-5:]}")

    def _now(self, client: httpx.Client) -> str:
        try:
            clock = client.get(f"/v1/worlds/{WORLD}/clock")
            return str(clock.json()["world_time"]) if clock.status_code == 200 else _START
        except (httpx.HTTPError, KeyError, ValueError):
            return _START


def _in_progress(answer: httpx.Response) -> bool:
    """A 409 for a retry that came while the first run of the request is still running: retried later."""
    return answer.status_code == 409 and "still in progress" in answer.text
