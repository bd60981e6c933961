"""SmartPlay-style games an NPC plays through the public API (pure rules and scoring): a two-armed bandit,
rock-paper-scissors against a biased opponent and Tower of Hanoi with 3 disks. SmartPlay's score counts the
turns the optimal action was taken (Hanoi: disks in place on the target peg); here it is normalised so that
0 is a random player's expected score and 100 the optimal one."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Bandit", "Game", "RockPaperScissors", "normalise", "parse_choice", "parse_hanoi_move", "payoff"]


def normalise(raw: float, random_raw: float, optimal_raw: float) -> float:
    """SmartPlay's score: 0 at a random player's expected result, 100 at the optimal one."""
    return 100.0 * (raw - random_raw) / (optimal_raw - random_raw)


def parse_choice(reply: str, options: tuple[str, ...]) -> str | None:
    """The option the reply names first (whole words, any case); None if it names none."""
    found = [(m.start(), o) for o in options for m in re.finditer(rf"\b{re.escape(o)}\b", reply, re.I)]
    return min(found)[1] if found else None


def parse_hanoi_move(reply: str) -> tuple[str, str] | None:
    """A move written ``A to C`` (or ``A -> C``, ``from A to C``); None if the reply has none."""
    m = re.search(r"\b([ABC])\s*(?:to|->|\u2192)\s*(?:peg\s+)?([ABC])\b", reply)
    return (m.group(1), m.group(2)) if m else None


class Game(Protocol):
    """What the harness needs: the rules told as a perception, a question per turn, a move applied."""

    name: str

    @property
    def limit(self) -> int: ...  # turns at most
    def rules(self) -> str: ...
    def question(self) -> str: ...
    def play(self, reply: str) -> str: ...  # the outcome, told back as a perception
    @property
    def done(self) -> bool: ...
    def score(self) -> float: ...


@dataclass
class Bandit:
    """Two levers paying a coin with probabilities ``odds``; scored on the pulls of the better lever."""

    seed: int
    rounds: int = 10
    odds: tuple[float, float] = (0.3, 0.7)
    name: str = "two-armed bandit"
    pulls: list[str | None] = field(default_factory=list)
    best: int = 0  # pulls of the better lever

    @property
    def limit(self) -> int:
        return self.rounds

    def rules(self) -> str:
        return ("A slot machine has a left lever and a right lever; each pull pays a coin or nothing, and "
                f"one lever pays more often. There are {self.rounds} pulls.")

    def question(self) -> str:
        return "Which lever do you pull now, left or right?"

    def play(self, reply: str) -> str:
        rng = random.Random(f"{self.seed}:{len(self.pulls)}")
        choice = parse_choice(reply, ("left", "right"))
        self.pulls.append(choice)
        arm = ("left", "right").index(choice) if choice else rng.randrange(2)
        self.best += self.odds[arm] == max(self.odds)
        paid = rng.random() < self.odds[arm]
        return f"The {('left', 'right')[arm]} lever {'paid a coin' if paid else 'paid nothing'}."

    @property
    def done(self) -> bool:
        return len(self.pulls) >= self.rounds

    def score(self) -> float:
        return normalise(self.best / self.rounds, 0.5, 1.0)


_BEATS = {"rock": "scissors", "paper": "rock", "scissors": "paper"}


@dataclass
class RockPaperScissors:
    """Against an opponent who plays rock, paper, scissors with ``bias``; scored on the rounds the throw with
    the best expected payoff against that bias was thrown."""

    seed: int
    rounds: int = 10
    bias: tuple[float, float, float] = (0.5, 0.3, 0.2)
    name: str = "rock-paper-scissors"
    moves: list[str | None] = field(default_factory=list)
    best: int = 0  # rounds with the best throw

    @property
    def limit(self) -> int:
        return self.rounds

    def rules(self) -> str:
        return (f"Rock-paper-scissors against Old Tom, {self.rounds} rounds: a win is +1, a loss -1. "
                "Old Tom has favourite throws.")

    def question(self) -> str:
        return "What do you throw this round: rock, paper or scissors?"

    def play(self, reply: str) -> str:
        rng = random.Random(f"{self.seed}:{len(self.moves)}")
        names = tuple(_BEATS)
        choice = parse_choice(reply, names)
        self.moves.append(choice)
        mine = choice or rng.choice(names)
        self.best += mine == max(_BEATS, key=lambda m: payoff(m, self.bias))
        theirs = rng.choices(names, weights=self.bias)[0]
        result = "won" if _BEATS[mine] == theirs else "lost" if _BEATS[theirs] == mine else "drew"
        return f"I threw {mine}, Old Tom threw {theirs}: I {result}."

    @property
    def done(self) -> bool:
        return len(self.moves) >= self.rounds

    def score(self) -> float:
        return normalise(self.best / self.rounds, 1 / 3, 1.0)


def payoff(move: str, bias: tuple[float, float, float]) -> float:
    """Expected payoff of ``move`` against an opponent throwing rock, paper, scissors with ``bias``."""
    return sum(p * (1 if _BEATS[move] == o else -1 if _BEATS[o] == move else 0)
               for o, p in zip(_BEATS, bias, strict=True))
