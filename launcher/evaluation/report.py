"""The evaluation report as Markdown: every figure measured with the paper's figure beside it."""

from __future__ import annotations

from typing import Any

from launcher.evaluation.grading import CATEGORIES
from launcher.evaluation.rating import PAPER_ORDER

__all__ = ["PAPER", "to_markdown"]

# Generative Agents (Park et al. 2023): TrueSkill mu of believability; 6 of 453 answers hallucinated.
# SmartPlay (Wu et al. 2023), Table 2: GPT-4-0613's score relative to the human baseline (human = 100).
PAPER: dict[str, Any] = {
    "trueskill_mu": {"full": 29.89, "no_reflection": 26.88, "no_reflection_planning": 25.64, "none": 21.21},
    "hallucination_rate": 6 / 453,
    # The 25-agent, 2-day Smallville run (DESIGN.md "Seed world").
    "town": {"party": "1 → 13 of 25 (52 %)", "candidacy": "1 → 8 of 25 (32 %)", "density": "0.167 → 0.74",
             "party_came": "5 of 12 invited"},
    "games": {"two-armed bandit": 100, "rock-paper-scissors": 91, "Tower of Hanoi (3 disks)": 83,
              "Crafter": 26},
}
_LABELS = {
    "full": "full architecture",
    "no_reflection": "no reflection",
    "no_reflection_planning": "no reflection, no planning",
    "none": "no observation, reflection or planning",
}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def to_markdown(report: dict[str, Any]) -> str:
    """The report's tables (``report`` as ``run_eval`` returns it)."""
    run = report["run"]
    lines = [
        f"# npcworld eval: {run['template']} ({run['npcs']} NPCs), seed {run['seed']}, "
        f"{run['hours']} world hours, provider {run['provider']}",
        "",
        *_interviews(report),
        "",
        *_ablations(report),
    ]
    if report.get("town"):
        lines += ["", *_town(report)]
    if report.get("games"):
        lines += ["", *_games(report)]
    stages = ", ".join(f"{k} {v:.0f} s" for k, v in run.get("stages_s", {}).items())
    lines += ["", f"Wall time {run['wall_s']:.0f} s ({stages}); load average (1, 5, 15 min) "
                  f"{run['load_start']} at the start, {run['load_end']} at the end."]
    return "\n".join(lines) + "\n"


def _interviews(report: dict[str, Any]) -> list[str]:
    full = report["interviews"]["full"]
    rows = [
        "## Interviews (full architecture)",
        "",
        "| figure | measured | paper |",
        "|---|---:|---:|",
    ]
    for c in CATEGORIES:
        cat = full["categories"][c]
        rows.append(f"| {c.replace('_', '-')} accuracy ({cat['correct']} of {cat['questions']}) "
                    f"| {_pct(cat['accuracy'])} | not reported (believability only) |")
    rows.append(f"| all answers correct ({full['answers']} answers) | {_pct(full['accuracy'])} | |")
    rows.append(f"| answers asserting what was never perceived ({full['hallucinated']} of {full['answers']}) "
                f"| {_pct(full['hallucination_rate'])} | {_pct(PAPER['hallucination_rate'])} (6 of 453) |")
    return rows


def _town(report: dict[str, Any]) -> list[str]:
    town, paper = report["town"], PAPER["town"]
    run, dens, gossip = town["run"], town["network_density"], town["gossip_provenance"]
    rows = [
        f"## The town (the full architecture's world: {run['npcs']} NPCs, {run['steps']} steps; the paper: "
        "25 agents, 2 days)",
        "",
        "| figure | measured | paper |",
        "|---|---:|---:|",
    ]
    for name, story in town["information_diffusion"].items():
        known = f"{story['start']} → {story['end']} of {run['npcs']} ({story['end_pct']} %)"
        rows.append(f"| {name} known by | {known} | {paper.get(name, '')} |")
    rows.append(f"| network density | {dens['start']} → {dens['end']} ({dens['edges_end']} edges) "
                f"| {paper['density']} |")
    if party := town.get("party"):
        reached = "" if party["window_simulated"] else " (party time not reached)"
        came = f"{party['invited_and_came']} of {party['invited']}{reached}"
        rows.append(f"| at the party: who knew of it and came | {came} | {paper['party_came']} |")
    rows.append(f"| quoted claims without a memory of the speaker | {gossip['without_a_memory']} of "
                f"{gossip['quoted_claims']} | |")
    calls = town["llm"].get("all", {}).get("calls_per_npc_day")
    rows.append(f"| LLM calls per NPC-day | {calls} | 1,498 (the reference code) |")
    return rows


def _ablations(report: dict[str, Any]) -> list[str]:
    ab = report.get("ablations")
    if not ab:
        return ["## Ablations", "", "not run (--no-ablations)"]
    rows = [
        f"## Ablations (TrueSkill from {ab['judgements']} pairwise judgements, judge: {ab['judge']})",
        "",
        "| condition | accuracy | hallucinated | mu | sigma | paper mu |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in ab["ranking"]:
        s = report["interviews"][r["condition"]]
        rows.append(f"| {_LABELS[r['condition']]} | {_pct(s['accuracy'])} | {_pct(s['hallucination_rate'])} "
                    f"| {r['mu']:.2f} | {r['sigma']:.2f} | {PAPER['trueskill_mu'][r['condition']]} |")
    order = " > ".join(_LABELS[c] for c in PAPER_ORDER)
    rows += ["", f"Order as the paper's ({order}): **{'yes' if ab['matches_paper'] else 'no'}**"]
    ties = ", ".join(f"{pair} on {n}" for pair, n in ab.get("ties", {}).items())
    rows += ["", f"Questions on which the paper's neighbours tied: {ties}."] if ties else []
    return rows


def _games(report: dict[str, Any]) -> list[str]:
    rows = [
        "## Games (0 = random, 100 = optimal; Crafter: 100 = the scripted reference player; SmartPlay's"
        " GPT-4-0613 relative to humans beside it)",
        "",
        "| game | turns | score | SmartPlay GPT-4 |",
        "|---|---:|---:|---:|",
    ]
    for g in report["games"]:
        paper = PAPER["games"].get(g["game"], "")
        rows.append(f"| {g['game']} | {g['turns']} | {g['score']:.1f} | {paper} |")
    return rows
