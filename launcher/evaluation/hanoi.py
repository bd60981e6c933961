"""Tower of Hanoi with 3 disks, as an NPC plays it through the public API (pure rules and scoring)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache

from launcher.evaluation.games import normalise, parse_hanoi_move

__all__ = ["Hanoi", "progress", "random_progress"]

Pegs = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
_START: Pegs = ((3, 2, 1), (), ())
_NAMES = "ABC"


def progress(pegs: Pegs) -> int:
    """How many of the largest disks already lie in place on peg C, from the bottom (3: solved)."""
    done = 0
    for want, have in zip((3, 2, 1), pegs[2], strict=False):
        if want != have:
            break
        done += 1
    return done


def legal(pegs: Pegs, src: int, dst: int) -> bool:
    return bool(pegs[src]) and src != dst and (not pegs[dst] or pegs[dst][-1] > pegs[src][-1])


def moved(pegs: Pegs, src: int, dst: int) -> Pegs:
    lists = [list(p) for p in pegs]
    lists[dst].append(lists[src].pop())
    return (tuple(lists[0]), tuple(lists[1]), tuple(lists[2]))


@cache
def random_progress(budget: int, runs: int = 2000) -> float:
    """A random legal player's expected best progress within ``budget`` moves (fixed seed: SmartPlay's 0)."""
    rng = random.Random(0)
    total = 0
    for _ in range(runs):
        pegs, best = _START, 0
        for _ in range(budget):
            src, dst = rng.choice([(s, d) for s in range(3) for d in range(3) if legal(pegs, s, d)])
            pegs = moved(pegs, src, dst)
            best = max(best, progress(pegs))
            if best == 3:
                break
        total += best
    return total / runs


@dataclass
class Hanoi:
    """3 disks from peg A to peg C in at most ``budget`` moves; scored on the best progress reached
    (an illegal or unreadable move is a turn lost)."""

    seed: int
    budget: int = 15
    name: str = "Tower of Hanoi (3 disks)"
    pegs: Pegs = _START
    turns: int = 0
    best: int = 0
    illegal: int = 0
    history: list[str] = field(default_factory=list)

    @property
    def limit(self) -> int:
        return self.budget

    def rules(self) -> str:
        return ("Tower of Hanoi: three disks (small 1, middle 2, large 3) sit on peg A; move them all to "
                "peg C, one disk at a time, never a larger disk on a smaller one. Say a move as 'A to C'.")

    def question(self) -> str:
        return f"The pegs are {self._state()}. Which disk do you move next (say it as 'A to C')?"

    def _state(self) -> str:
        pegs = zip(_NAMES, self.pegs, strict=True)
        return ", ".join(f"{n}: {' '.join(map(str, p)) or 'empty'}" for n, p in pegs)

    def play(self, reply: str) -> str:
        self.turns += 1
        move = parse_hanoi_move(reply)
        if move is None or not legal(self.pegs, _NAMES.index(move[0]), _NAMES.index(move[1])):
            self.illegal += 1
            return f"That was not a legal move; the pegs are still {self._state()}."
        self.pegs = moved(self.pegs, _NAMES.index(move[0]), _NAMES.index(move[1]))
        self.best = max(self.best, progress(self.pegs))
        self.history.append(f"{move[0]} to {move[1]}")
        return f"I moved a disk from {move[0]} to {move[1]}; the pegs are now {self._state()}."

    @property
    def done(self) -> bool:
        return self.best == 3 or self.turns >= self.budget

    def score(self) -> float:
        return normalise(self.best, random_progress(self.budget), 3)
