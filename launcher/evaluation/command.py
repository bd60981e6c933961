"""The ``npcworld eval`` command: options, a progress bar per stage, the report printed at the end."""

from __future__ import annotations

import sys
from pathlib import Path

import click

__all__ = ["eval_command"]


class _Bars:
    """One progress line per stage, redrawn in place (stderr, so the report on stdout stays clean)."""

    def __init__(self) -> None:
        self.stage = ""
        self.last: tuple[str, int, int] | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if (stage, done, total) == self.last:
            return
        self.last = (stage, done, total)
        if stage != self.stage and self.stage:
            click.echo("", err=True)
        self.stage = stage
        width = 30
        filled = width * min(done, total) // max(total, 1)
        bar = "#" * filled + "-" * (width - filled)
        click.echo(f"\r{stage:<22} [{bar}] {done}/{total}", nl=False, err=True)

    def close(self) -> None:
        if self.stage:
            click.echo("", err=True)


@click.command("eval")
@click.option("--template", default="brindle-hollow", show_default=True, help="World template of the town.")
@click.option("--npcs", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="Simulate and interview the template's first N residents.")
@click.option("--hours", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="World hours simulated before the interviews.")
@click.option("--days", type=click.FloatRange(min=0, min_open=True), default=None,
              help="World days instead of --hours (e.g. 2 for the paper's span).")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--step-seconds", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True)
@click.option("--ablations/--no-ablations", default=True, show_default=True,
              help="Also run the paper's three ablated worlds and rank the four with TrueSkill.")
@click.option("--games/--no-games", default=True, show_default=True,
              help="Also play the bandit, rock-paper-scissors, Tower of Hanoi and Crafter.")
@click.option("--game-rounds", type=click.IntRange(1, 100), default=10, show_default=True,
              help="Turns of the bandit and of rock-paper-scissors.")
@click.option("--hanoi-moves", type=click.IntRange(1, 100), default=15, show_default=True,
              help="Moves allowed in Tower of Hanoi (7 solve it).")
@click.option("--crafter-turns", type=click.IntRange(1, 500), default=30, show_default=True,
              help="Turns of Crafter (each one a chat).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("eval-out"), show_default=True,
              help="Directory for eval.json and eval.md.")
def eval_command(template: str, npcs: int, hours: float, days: float | None, seed: int, step_seconds: float,
                 ablations: bool, games: bool, game_rounds: int, hanoi_moves: int, crafter_turns: int,
                 out: Path) -> None:
    """Interview NPCs after a seeded simulation and grade them against the event log, rank the paper's
    ablations with TrueSkill, play SmartPlay-style games; offline, or with the configured LLM endpoint."""
    from launcher.evaluation.rating import CONDITIONS
    from launcher.evaluation.report import to_markdown
    from launcher.evaluation.runner import EvalConfig, run_eval
    from npcworld.templates import template_exists

    if not template_exists(template):
        raise click.BadParameter(f"no template {template!r}", param_hint="--template")
    conditions = tuple(CONDITIONS) if ablations else ("full",)
    cfg = EvalConfig(out, template, npcs, days * 24 if days is not None else hours, seed, step_seconds,
                     conditions, games, game_rounds, hanoi_moves, crafter_turns)
    bars = _Bars()
    try:
        report = run_eval(cfg, bars)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP: the private backend has been stopped
        bars.close()
        click.echo("stopped: no report; the private backend is down", err=True)
        sys.exit(130)
    bars.close()
    click.echo(to_markdown(report))
    click.echo(f"saved {out}/eval.json and {out}/eval.md")
