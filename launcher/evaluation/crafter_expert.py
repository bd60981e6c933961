"""A scripted Crafter player that knows the whole map and the tech tree: the 100 of the Crafter score.

SmartPlay normalises Crafter against human players over episodes of up to 10,000 steps; an evaluation turn is
a chat, so a game here lasts tens of turns and no human figure exists for that length. The reference is this
player instead, on the same map for the same turns: it pursues the achievements in ``ORDER``, each through its
prerequisites as the game's own rules (``crafter.constants``) state them (a sword needs wood and a table
nearby; a table needs wood; wood comes from a tree), walking the shortest path to what it needs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import crafter

__all__ = ["ORDER", "expert_action"]

# Quick achievements first, then the tech tree; the ones that take hundreds of steps (sleeping until woken,
# a sapling growing ripe) or that need iron are left to luck.
ORDER = ("collect_wood", "place_table", "make_wood_pickaxe", "make_wood_sword", "collect_drink",
         "collect_stone", "place_stone", "make_stone_pickaxe", "make_stone_sword", "collect_sapling",
         "place_plant", "eat_cow", "collect_coal", "place_furnace", "defeat_zombie")
_C = crafter.constants
_ACTIONS = list(_C.actions)
_MOVES = {(-1, 0): "move_left", (1, 0): "move_right", (0, -1): "move_up", (0, 1): "move_down"}
_DEPTH = 4  # prerequisites of prerequisites, at most
_BLOCKED = "blocked"  # a prerequisite that cannot be had (not an action)
Cell = tuple[int, int]
Target = Callable[[Cell], bool]


def expert_action(env: Any) -> int:
    """The reference player's next action (an index into ``crafter.constants.actions``)."""
    player = env._player
    for achievement in ORDER:
        if player.achievements[achievement] == 0:
            action = _pursue(env, achievement, 0)
            if action is not None:
                return _ACTIONS.index(action)
    return _ACTIONS.index("noop")


def _pursue(env: Any, goal: str, depth: int) -> str | None:
    """The next action towards ``goal`` (an achievement's name), or None where it cannot be reached."""
    if depth > _DEPTH:
        return None
    kind, name = goal.split("_", 1)
    if kind == "collect":
        return _collect(env, name, depth)
    if kind == "place":
        info = _C.place[name]
        return _first(_needs(env, info["uses"], depth),
                      lambda: _act_on(env, f"place_{name}", _free(env, info["where"])))
    if kind == "make":
        info = _C.make[name]
        return _first(_needs(env, info["uses"], depth),
                      lambda: _near(env, info["nearby"], depth) or f"make_{name}")
    if goal == "eat_cow":
        return _act_on(env, "do", _holding(env, crafter.objects.Cow))
    if goal == "defeat_zombie":
        return _act_on(env, "do", _holding(env, crafter.objects.Zombie))
    return None


def _collect(env: Any, item: str, depth: int) -> str | None:
    material = next((m for m, info in _C.collect.items() if item in info["receive"]), None)
    if material is None:
        return None
    return _first(_needs(env, _C.collect[material]["require"], depth), lambda: _act_on(
        env, "do", lambda c: env._world[c][0] == material and env._world[c][1] is None))


def _first(need: str | None, then: Callable[[], str | None]) -> str | None:
    """The action a lacking prerequisite calls for (None where it cannot be had), else ``then()``."""
    if need is None:
        return then()
    return None if need == _BLOCKED else need


def _needs(env: Any, uses: dict[str, int], depth: int) -> str | None:
    """The next action towards the first item of ``uses`` the player lacks: None when it has them all,
    ``_BLOCKED`` when that item cannot be had."""
    inventory = env._player.inventory
    for item, amount in uses.items():
        if inventory[item] < amount:
            goal = f"make_{item}" if item in _C.make else f"collect_{item}"
            return _pursue(env, goal, depth + 1) or _BLOCKED
    return None


def _near(env: Any, utilities: list[str], depth: int) -> str | None:
    """None when every utility is within one cell (crafting allowed); else the next step to one, or the
    next action towards placing it where the map has none."""
    world, pos = env._world, env._player.pos
    materials, _ = world.nearby(pos, 1)
    missing = [u for u in utilities if u not in materials]
    if not missing:
        return None
    utility = missing[0]
    step = _step_to(env, lambda c: any(world[(c[0] + dx, c[1] + dy)][0] == utility
                                       for dx in (-1, 0, 1) for dy in (-1, 0, 1)))
    if step is not None:
        return step
    return _pursue(env, f"place_{utility}", depth + 1)


def _free(env: Any, where: list[str]) -> Target:
    return lambda c: env._world[c][0] in where and env._world[c][1] is None


def _holding(env: Any, kind: type) -> Target:
    return lambda c: isinstance(env._world[c][1], kind)


def _act_on(env: Any, action: str, target: Target) -> str | None:
    """``action`` if the player faces a target cell; else the next step to stand beside one and face it."""
    player = env._player
    facing = (int(player.pos[0] + player.facing[0]), int(player.pos[1] + player.facing[1]))
    if target(facing):
        return action
    here = (int(player.pos[0]), int(player.pos[1]))
    for delta, move in _MOVES.items():
        if target((here[0] + delta[0], here[1] + delta[1])):
            return move  # turns towards it (or steps onto it, when it can be walked on)
    return _step_to(env, lambda c: any(target((c[0] + d[0], c[1] + d[1])) for d in _MOVES))


def _step_to(env: Any, goal: Target, limit: int = 4096) -> str | None:
    """The first move of a shortest walk to a cell where ``goal`` holds (None: none reachable or already
    there)."""
    world, start = env._world, (int(env._player.pos[0]), int(env._player.pos[1]))
    if goal(start):
        return None
    first: dict[Cell, str | None] = {start: None}
    queue: deque[Cell] = deque([start])
    while queue and len(first) < limit:
        cell = queue.popleft()
        for delta, move in _MOVES.items():
            nxt = (cell[0] + delta[0], cell[1] + delta[1])
            material, obj = world[nxt]
            if nxt in first or material not in _C.walkable or obj is not None:
                continue
            first[nxt] = first[cell] or move
            if goal(nxt):
                return first[nxt]
            queue.append(nxt)
    return None
