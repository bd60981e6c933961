"""``npcworld test`` end to end: scenario files run on a private embedded backend of their own (every service,
the gateway), LLM calls recorded next to them, a JUnit report, and an exit code that fails CI on a failure."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "cafe-fire.yaml"

FAILING = """\
name: Sam forgets nothing
world:
  start_time: 2023-02-13T09:00:00Z
npcs:
  - npc_id: sam
    name: Sam Moore
    seed: Sam Moore keeps the general store
steps:
  - perceive: sam
    text: a traveller paid with a gold coin
  - chat: sam
    text: Have you seen any gold lately?
  - expect:
      - memories: sam
        contains: gold coin
      - memories: sam
        not_contains: gold coin
      - reply: chat-1
        contains: dragon
"""

INVALID = """\
world:
  start_time: 2023-02-13T09:00:00Z
steps:
  - chat: nobody
"""


def test_scenarios_run_on_a_private_backend_and_report_to_ci(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    shutil.copy(EXAMPLE, scenarios / EXAMPLE.name)
    (scenarios / "sam.yaml").write_text(FAILING)
    (scenarios / "invalid.yaml").write_text(INVALID)
    env = {**os.environ, "LLM_PROVIDER": "offline"}
    for name in ("DATABASE_URL", "KAFKA_BOOTSTRAP_SERVERS", "NPCWORLD_API_KEY"):
        env.pop(name, None)
    junit = tmp_path / "out" / "junit.xml"
    run = subprocess.run(
        [sys.executable, "-m", "launcher.cli", "--log-level", "WARNING", "test",
         *sorted(scenarios.glob("*.yaml")), "--llm", "record", "--junit-xml", str(junit)],
        env=env, capture_output=True, text=True, timeout=150)
    out = run.stdout
    assert run.returncode == 1, out + run.stderr  # a failed check fails the build

    assert "PASS  Marta remembers the kitchen fire  (6 checks" in out
    assert f"{scenarios}/sam.yaml:16: failed: memories of sam: not 'gold coin'" in out
    assert "a memory contains 'gold coin': 'a traveller paid with a gold coin'" in out
    assert f"{scenarios}/sam.yaml:18: failed: reply chat-1: contains 'dragon'" in out
    assert f"{scenarios}/invalid.yaml:4: steps[0].text: Field required" in out
    assert out.splitlines()[-2] == "3 scenarios (2 failed), 10 checks: 2 failed, 1 errors"

    suites = {s.get("name"): s for s in ET.parse(junit).getroot().findall("testsuite")}
    assert [(s.get("tests"), s.get("failures"), s.get("errors")) for s in suites.values()] == [
        ("6", "0", "0"), ("1", "0", "1"), ("3", "2", "0")]  # by file: the example, invalid, sam
    sam = [(c.get("name"), c.find("failure") is not None) for c in suites["Sam forgets nothing"]]
    assert sam == [("memories of sam: contains 'gold coin'", False),
                   ("memories of sam: not 'gold coin'", True), ("reply chat-1: contains 'dragon'", True)]

    recorded = (scenarios / "cafe-fire.llm.jsonl").read_text()
    assert '"prompt_kind": "player_reply"' in recorded and '"prompt_kind": "importance"' in recorded
    assert '"prompt_kind": "plan_day"' in recorded  # the clock steps made Marta plan her day
    assert (scenarios / "sam.llm.jsonl").exists() and not (scenarios / "invalid.llm.jsonl").exists()
