"""A scenario's recorded LLM calls (``npcworld test --llm record``) replayed for a fresh tenant with no
provider reachable: the same answers, and a call the recording lacks is a clear error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool

from launcher.scenarios.modes import llm_env
from launcher.scenarios.recording import load_recording, read_recording, save_recording
from npcworld.llm import LLMClient, LLMSettings, ReplayMissingError, build_llm
from npcworld.llm.prompts import ImportanceOutput
from npcworld.llm.testing import FakeOpenAIServer
from tests.integration.llm.conftest import Scope, call_rows

MEMORIES = [["the stove caught fire", "Tobias ordered a coffee"], ["Marta is getting married"]]


async def _rate(llm: LLMClient, scope: Scope, batches: list[list[str]]) -> list[Any]:
    return [(await llm.complete("importance", {"npc_name": "Marta", "memories": b}, ImportanceOutput,
                                **scope)).value for b in batches]


async def test_a_recording_replays_for_another_tenant_without_the_provider(
    make_llm: Callable[..., LLMClient], server: FakeOpenAIServer, pool: AsyncConnectionPool, scope: Scope,
    tmp_path: Path,
) -> None:
    recorded = await _rate(make_llm(), scope, MEMORIES)
    await _rate(make_llm(), scope, MEMORIES[:1])  # the same request twice is one recorded call
    path = tmp_path / "fire.llm.jsonl"
    assert await save_recording(pool, scope["tenant_id"], path) == 2
    text = path.read_text()
    assert await save_recording(pool, scope["tenant_id"], path) == 2 and path.read_text() == text

    server.down = True  # any provider call would now fail
    calls = server.chat_count
    fresh = Scope(tenant_id=scope["tenant_id"] + "-ci", world_id=scope["world_id"], npc_id=scope["npc_id"])
    assert await load_recording(pool, fresh["tenant_id"], fresh["world_id"], path) == 2
    env = llm_env("replay", read_recording(path))
    assert env == {"LLM_MODE": "replay", "LLM_PROVIDER": "openai", "LLM_MODEL": "fake-model",
                   "LLM_RESPONSE_FORMAT": "json_object"}
    replay = build_llm(LLMSettings.model_validate({name.lower(): value for name, value in env.items()}), pool)

    assert await _rate(replay, fresh, MEMORIES) == recorded
    with pytest.raises(ReplayMissingError, match="no recorded importance@v1 answer"):
        await _rate(replay, fresh, [["the mill flooded"]])
    assert server.chat_count == calls
    rows = await call_rows(pool, fresh["tenant_id"])
    assert [r["outcome"] for r in rows] == ["ok", "ok", "replayed", "replayed"]


def test_a_damaged_recording_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "fire.llm.jsonl"
    path.write_text('{"prompt_kind": "importance"}\nnot json\n')
    with pytest.raises(ValueError, match=r"fire.llm.jsonl:1: not a recorded call \(missing npc_id, "):
        read_recording(path)
