"""SmartPlay-style games played by an NPC through the public API: the rules and every outcome reach it as
perceptions (``POST .../perceptions``), each turn's question as a chat (``POST .../chat``), and the harness
reads its move from the reply."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from launcher.evaluation.crafter_game import Crafter
from launcher.evaluation.games import Bandit, Game, RockPaperScissors
from launcher.evaluation.hanoi import Hanoi
from launcher.evaluation.worlds import api, reply_to, wait_ready

__all__ = ["GAMES_WORLD", "PLAYER", "games_for", "play_games"]

GAMES_WORLD = "eval-games"
PLAYER = {"npc_id": "rowan", "name": "Rowan Vale", "age": 29, "traits": ["curious", "careful"],
          "occupation": "games tester",
          "seed": "Rowan Vale tests games for a living; Rowan remembers what paid off and does it again"}
_START = datetime(2023, 2, 13, 9, 0, tzinfo=UTC)
Settle = Callable[[str], Awaitable[None]]
Tick = Callable[[int, int], None]


def games_for(seed: int, rounds: int, hanoi_moves: int = 15, crafter_turns: int = 30) -> list[Game]:
    """The four games: bandit and rock-paper-scissors of ``rounds`` turns, Hanoi in ``hanoi_moves`` moves,
    Crafter in ``crafter_turns``."""
    return [Bandit(seed, rounds), RockPaperScissors(seed, rounds), Hanoi(seed, hanoi_moves),
            Crafter(seed, crafter_turns)]


class _Table:
    """The NPC at the table: what it is told, when, and what it answers."""

    def __init__(self, client: httpx.AsyncClient, world_id: str, settle: Settle) -> None:
        self.client, self.world_id, self.settle = client, world_id, settle
        self.now = _START
        self.path = f"/v1/worlds/{world_id}/npcs/{PLAYER['npc_id']}"

    async def tell(self, text: str) -> None:
        self.now += timedelta(minutes=1)
        await api(self.client, "POST", f"{self.path}/perceptions",
                  {"description": text, "world_time": self.now.isoformat(), "subject": "game"})
        await self.settle(self.world_id)  # remembered before the next question

    async def ask(self, text: str) -> str:
        self.now += timedelta(minutes=1)
        return await reply_to(self.client, self.path, "chat", {
            "player_id": "game-host", "text": text, "timeout_s": 60, "world_time": self.now.isoformat()})


async def play_games(client: httpx.AsyncClient, settle: Settle, games: list[Game], tick: Tick,
                     world_id: str = GAMES_WORLD) -> list[dict[str, Any]]:
    """Create a world with one player NPC and play ``games`` in turn; one result per game."""
    await api(client, "POST", "/v1/worlds", {"world_id": world_id, "name": "evaluation games",
                                            "start_time": _START.isoformat()})
    await api(client, "POST", f"/v1/worlds/{world_id}/npcs", PLAYER)
    await wait_ready(client, world_id)
    await settle(world_id)
    table = _Table(client, world_id, settle)
    results, turns, total = [], 0, sum(g.limit for g in games)
    for game in games:
        await table.tell(game.rules())
        replies = []
        while not game.done:
            reply = await table.ask(game.question())
            replies.append(reply)
            await table.tell(game.play(reply))
            turns += 1
            tick(turns, total)
        turns += game.limit - len(replies)  # a game solved early: its remaining turns are done
        tick(turns, total)
        score = await asyncio.to_thread(game.score)  # Crafter plays its baselines out: seconds of CPU
        results.append({"game": game.name, "score": round(score, 1), "turns": len(replies),
                        "first_replies": replies[:3]})
    return results
