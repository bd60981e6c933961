"""``npcworld eval`` end to end on a private backend: a short seeded run of the full architecture and the
paper's three ablations, interviews graded against the event log, TrueSkill ranking, the games; progress on
stderr, the report as JSON and Markdown with the paper's figures beside the measured ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_a_short_eval_grades_interviews_ranks_ablations_and_plays_the_games(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "KAFKA_BOOTSTRAP_SERVERS", "OPENAI_BASE_URL", "OPENAI_API_KEY")}
    out = tmp_path / "eval"
    done = subprocess.run(
        [sys.executable, "-m", "launcher.cli", "--log-level", "WARNING", "eval", "--npcs", "1",
         "--hours", "0.02", "--game-rounds", "1", "--hanoi-moves", "1", "--crafter-turns", "2",
         "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for stage in ("starting the backend", "simulating", "interviewing", "playing games"):
        assert stage in done.stderr
    report = json.loads((out / "eval.json").read_text())
    full, none = report["interviews"]["full"], report["interviews"]["none"]
    # Marta's plan for the day is a memory of the full architecture only: she tells it, the ablated one can't.
    assert full["categories"]["plans"]["correct"] == full["categories"]["plans"]["questions"] == 2
    assert none["categories"]["plans"]["correct"] == 0
    assert full["categories"]["self_knowledge"]["questions"] == 2 and full["hallucinated"] == 0
    ranking = {r["condition"]: r["mu"] for r in report["ablations"]["ranking"]}
    assert ranking["full"] > ranking["no_reflection_planning"] and ranking["full"] > ranking["none"]
    assert [(g["game"], g["turns"]) for g in report["games"]] == [
        ("two-armed bandit", 1), ("rock-paper-scissors", 1), ("Tower of Hanoi (3 disks)", 1), ("Crafter", 2)]
    assert report["games"][3]["first_replies"][0]  # the NPC answered the view it was told
    markdown = (out / "eval.md").read_text()
    assert "| plans accuracy (2 of 2) | 100.0 % |" in markdown and "1.3 % (6 of 453)" in markdown
    assert "| 29.89 |" in markdown and "| 83 |" in markdown and "| Crafter | 2 |" in markdown
    assert markdown in done.stdout
    # The town report's figures for the full architecture's world, read before the interviews.
    assert report["town"]["run"]["npcs"] == 1 and "party" in report["town"]["information_diffusion"]
    assert "| network density |" in markdown and "| 0.167 → 0.74 |" in markdown
    assert "| party known by | 1 → 1 of 1 (100.0 %) | 1 → 13 of 25 (52 %) |" in markdown
