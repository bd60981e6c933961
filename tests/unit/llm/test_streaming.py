"""Streaming a reply while it is produced: the reply field read out of JSON tokens as they arrive, a live
call that streams to the caller's sink, and the one-prompt-only rule (other calls in the block don't)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from npcworld.llm import Backoff, CircuitBreaker
from npcworld.llm.client import _Watched
from npcworld.llm.live import LiveCaller
from npcworld.llm.prompts import Message, get_prompt
from npcworld.llm.prompts.dialogue import PlayerLineInput, SpokenReply
from npcworld.llm.streaming import ReplyFieldReader, streaming_to, words
from npcworld.llm.types import ChatParams, ChatReply

ANSWER = {"reply": 'I\'m planning a "Valentine\'s" party \\ at Hobbs Cafe — come by at 5\u00a0pm!',
          "warmth": 1}


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_the_reply_field_is_read_out_of_json_as_it_arrives_whatever_the_cuts() -> None:
    raw = json.dumps(ANSWER, ensure_ascii=True)  # escapes (\\u2014, \\") cut across pieces too
    for size in (1, 2, 3, 7):
        reader = ReplyFieldReader("reply")
        seen = [reader.feed(p) for p in _pieces(raw, size)]
        assert "".join(seen) == ANSWER["reply"]
        assert seen[0] == ""  # nothing before the field's value starts


def test_words_put_together_again_are_the_text() -> None:
    text = "Hello  there, I am   Isabella.\n Come!"
    assert "".join(words(text)) == text and len(words(text)) == 6


class StreamingProvider:
    """A chat provider that streams its answer in 4-character pieces."""

    name, model = "openai", "fake-model"

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.streamed = 0

    async def chat(self, messages: list[Message], params: ChatParams) -> ChatReply:
        return ChatReply(self.answer, 10, 10)

    async def chat_stream(self, messages: list[Message], params: ChatParams, on_text: object) -> ChatReply:
        self.streamed += 1
        for piece in _pieces(self.answer, 4):
            await on_text(piece)  # type: ignore[operator]
        return ChatReply(self.answer, 10, 10)

    async def close(self) -> None:
        return None


async def test_a_live_player_reply_streams_its_tokens_to_the_sink_and_other_prompts_do_not() -> None:
    provider = StreamingProvider(json.dumps(ANSWER))
    caller = LiveCaller(provider, CircuitBreaker("openai", 3, 10), Backoff(0.01, 0.1), max_retries=0)
    template = get_prompt("player_reply", SpokenReply)
    inputs = PlayerLineInput(npc="Isabella", speaker="a visitor (p1)", text="Any plans?", now="Tuesday")
    params = ChatParams(prompt=template.key, temperature=0.0, max_tokens=300, response_format=None)
    got: list[str] = []

    async def sink(text: str) -> None:
        got.append(text)

    async with streaming_to(sink):
        done = await caller.call(template, inputs, template.render(inputs), params)
    assert done.value == SpokenReply(**ANSWER) and "".join(got) == ANSWER["reply"] and len(got) > 5
    other = get_prompt("interview_answer", SpokenReply)
    assert provider.streamed == 1
    done = await caller.call(other, inputs, other.render(inputs), params)  # no sink set: not streamed
    assert done.value is not None and provider.streamed == 1


class _Batcher:
    """A sink that takes several chunks together, as ``ReplyChunkWriter`` does."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def __call__(self, text: str) -> None:
        self.calls.append([text])

    async def send_all(self, texts: Sequence[str]) -> None:
        self.calls.append(list(texts))


async def test_a_final_answer_reaches_a_batching_sink_in_one_go_and_a_plain_sink_word_by_word() -> None:
    text = ANSWER["reply"]
    batcher = _Batcher()
    watched = _Watched(batcher)
    await watched.words_of(text)
    assert watched.sent and len(batcher.calls) == 1 and "".join(batcher.calls[0]) == text
    plain: list[str] = []

    async def sink(chunk: str) -> None:
        plain.append(chunk)

    await _Watched(sink).words_of(text)
    assert plain == words(text) and len(plain) > 1
