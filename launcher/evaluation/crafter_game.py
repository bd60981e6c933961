"""Crafter (PyPI ``crafter``, headless) as an NPC plays it through the public API: each turn's question
describes what the player sees, holds and feels, the reply names one of the 17 actions, and the outcome is
told back. Scored as SmartPlay scores Crafter (the number of achievements unlocked so far, summed over the
turns played), normalised so that 0 is a random player's expected sum on the same map and 100 the scripted
reference player's (``crafter_expert``)."""

from __future__ import annotations

import collections
import copy
import functools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import crafter

from launcher.evaluation.crafter_expert import expert_action
from launcher.evaluation.games import normalise

__all__ = ["ACTION_WORDS", "Crafter", "describe", "parse_crafter_action", "play_out", "unechoed"]

# The actions as the player is told them, in the game's order (``crafter.constants.actions``).
ACTION_WORDS = ("wait", "move west", "move east", "move north", "move south", "do", "sleep", "place stone",
                "place table", "place furnace", "place plant", "make wood pickaxe", "make stone pickaxe",
                "make iron pickaxe", "make wood sword", "make stone sword", "make iron sword")
_DIRECTIONS = {"west": 1, "left": 1, "east": 2, "right": 2, "north": 3, "up": 3, "south": 4, "down": 4}
_MOVE = re.compile(
    r"\b(?:move|go|walk|step|head)\s+(?:to\s+the\s+)?(west|east|north|south|left|right|up|down)\b", re.I)
_PLACE = re.compile(r"\b(?:place|put|build)\s+(?:a\s+|the\s+)?(stone|table|furnace|plant|sapling)\b", re.I)
_MAKE = re.compile(r"\b(?:make|craft)\s+(?:a\s+|an\s+|the\s+)?(wood|wooden|stone|iron)\s+(pickaxe|sword)\b",
                   re.I)
_DO = re.compile(r"\b(?:do|collect|chop|mine|attack|hit|drink|eat|interact)\b", re.I)
_SLEEP = re.compile(r"\bsleep\b", re.I)
_WAIT = re.compile(r"\b(?:wait|noop)\b", re.I)


def _action_of(pattern: re.Pattern[str], m: re.Match[str]) -> int:
    words = [g.lower() for g in m.groups()]
    if pattern is _MOVE:
        return _DIRECTIONS[words[0]]
    if pattern is _PLACE:
        return ACTION_WORDS.index(f"place {words[0].replace('sapling', 'plant')}")
    if pattern is _MAKE:
        return ACTION_WORDS.index(f"make {words[0].replace('wooden', 'wood')} {words[1]}")
    return {_DO: 5, _SLEEP: 6}.get(pattern, 0)


_VIEW = (4, 3)  # what the player sees: 4 cells either side, 3 above and below (Crafter's 9 x 7 local view)
_RANDOM_RUNS = 20


def parse_crafter_action(reply: str) -> int | None:
    """The action the reply names first (an index into ``ACTION_WORDS``); None if it names none."""
    found = [(m.start(), _action_of(p, m)) for p in (_MOVE, _PLACE, _MAKE, _DO, _SLEEP, _WAIT)
             for m in p.finditer(reply)]
    return min(found)[1] if found else None


def unechoed(reply: str, told: tuple[str, ...]) -> str:
    """The reply without the sentences it repeats from what the player was told (the rules, the turn's
    question): words copied from the question ("What do you do now?") are not a choice of action."""
    for text in told:
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            if len(sentence) > 10:
                reply = reply.replace(sentence, " ")
    return reply


def _where(dx: int, dy: int) -> str:
    parts = [f"{abs(dy)} north" if dy < 0 else f"{dy} south" if dy > 0 else "",
             f"{abs(dx)} west" if dx < 0 else f"{dx} east" if dx > 0 else ""]
    return " and ".join(p for p in parts if p)


def describe(env: Any) -> str:
    """What the player sees (the nearest of each thing in view), faces, holds and feels."""
    world, player = env._world, env._player
    px, py = int(player.pos[0]), int(player.pos[1])
    nearest: dict[str, tuple[int, int, int]] = {}
    for dx in range(-_VIEW[0], _VIEW[0] + 1):
        for dy in range(-_VIEW[1], _VIEW[1] + 1):
            material, obj = world[(px + dx, py + dy)]
            seen = type(obj).__name__.lower() if obj is not None and obj is not player else material
            if seen and seen != "grass" and (dx, dy) != (0, 0):
                distance = abs(dx) + abs(dy)
                if seen not in nearest or distance < nearest[seen][0]:
                    nearest[seen] = (distance, dx, dy)
    sights = "; ".join(f"{name} {_where(dx, dy)}" for name, (_, dx, dy) in sorted(nearest.items(),
                                                                                   key=lambda kv: kv[1]))
    fx, fy = px + int(player.facing[0]), py + int(player.facing[1])
    material, obj = world[(fx, fy)]
    facing = type(obj).__name__.lower() if obj is not None else material or "the edge of the world"
    vitals = ", ".join(f"{k} {player.inventory[k]}" for k in ("health", "food", "drink", "energy"))
    held = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in player.inventory.items()
                     if v and k not in ("health", "food", "drink", "energy")) or "nothing"
    return (f"I see: {sights or 'only grass'}. I face {facing}. I hold {held}. My {vitals} (of 9)."
            + (" It is dark." if world.daylight < 0.3 else ""))


def _unlocked(env: Any) -> set[str]:
    return {name for name, count in env._player.achievements.items() if count > 0}


def play_out(env: Any, turns: int, policy: Callable[[Any], int]) -> int:
    """SmartPlay's raw Crafter score of ``policy(env) -> action`` over ``turns`` turns (on ``env`` itself)."""
    total = 0
    for _ in range(turns):
        _, _, done, _ = env.step(policy(env))
        total += len(_unlocked(env))
        if done:
            break
    return total


def _random_player(rng: random.Random) -> Callable[[Any], int]:
    return lambda _env: rng.randrange(len(ACTION_WORDS))


class _Chunk(dict[Any, None]):
    """The creatures of one map chunk in the order they arrived. Crafter keeps them in a set, ordered by
    memory address, and picks the one to despawn by its place in that order, so two copies of one map given
    the same actions could differ; in insertion order (a dict's keys) they never do."""

    def add(self, obj: Any) -> None:
        self[obj] = None

    def remove(self, obj: Any) -> None:
        del self[obj]


@functools.cache
def _new_map(seed: int) -> Any:
    """The map of ``seed`` before the first turn (made once per process: generating it takes seconds); every
    player gets a copy. No player here looks at the image: drawing it is two thirds of a step's time, and at
    night it draws noise from the world's random state, so no copy draws it."""
    env = crafter.Env(seed=seed, length=None)
    env.render = lambda *args, **kwargs: None
    env.reset()
    world = env._world
    world._chunks = collections.defaultdict(_Chunk, {
        key: _Chunk.fromkeys(sorted(objects, key=lambda o: (int(o.pos[0]), int(o.pos[1]))))
        for key, objects in world._chunks.items()})
    return env


@dataclass
class Crafter:
    """One Crafter world (``seed``) played for ``turns`` turns; the episode ends early if the player dies."""

    seed: int
    turns: int = 30
    name: str = "Crafter"
    moves: list[int | None] = field(default_factory=list)
    raw: int = 0  # SmartPlay's score: achievements unlocked so far, summed over the turns played
    dead: bool = False
    asked: str = ""  # the last turn's question
    _env: Any = field(default=None, init=False, repr=False)

    @property
    def env(self) -> Any:
        if self._env is None:
            self._env = copy.deepcopy(_new_map(self.seed))
        return self._env

    @property
    def limit(self) -> int:
        return self.turns

    def rules(self) -> str:
        return ("Crafter is a survival game on a grid seen from above. Each turn I take one action: "
                f"{', '.join(ACTION_WORDS)}. 'do' works on what I face: it collects wood from a tree, "
                "drinks water, mines stone with a pickaxe, or hits a cow or a zombie. A table needs wood; a "
                "pickaxe or sword needs wood and a table next to me; stone ones also need stone. Every new "
                "achievement (first wood, first table, first pickaxe...) scores. "
                f"There are {self.turns} turns.")

    def question(self) -> str:
        self.asked = f"{describe(self.env)} What do you do now? Name one action."
        return self.asked

    def play(self, reply: str) -> str:
        before = _unlocked(self.env)
        choice = parse_crafter_action(unechoed(reply, (self.rules(), self.asked)))
        self.moves.append(choice)
        action = choice if choice is not None else random.Random(f"{self.seed}:{len(self.moves)}").randrange(
            len(ACTION_WORDS))
        _, _, done, _ = self.env.step(action)
        now = _unlocked(self.env)
        self.raw += len(now)
        self.dead = done and self.env._player.health <= 0
        told = f"I chose to {ACTION_WORDS[action]}."
        if now - before:
            told += f" New achievement: {', '.join(sorted(a.replace('_', ' ') for a in now - before))}."
        return told + (" I died; the game is over." if self.dead else "")

    @property
    def done(self) -> bool:
        return len(self.moves) >= self.turns or self.dead

    def random_raw(self) -> float:
        """A uniformly random player's expected raw score on the same map for the same turns."""
        runs = []
        for run in range(_RANDOM_RUNS):
            rng = random.Random(f"{self.seed}:random:{run}")
            runs.append(play_out(copy.deepcopy(_new_map(self.seed)), self.turns, _random_player(rng)))
        return sum(runs) / len(runs)

    def reference_raw(self) -> int:
        """The scripted reference player's raw score on the same map for the same turns."""
        return play_out(copy.deepcopy(_new_map(self.seed)), self.turns, expert_action)

    def score(self) -> float:
        low, high = self.random_raw(), self.reference_raw()
        return normalise(self.raw, low, max(high, low + 1))
