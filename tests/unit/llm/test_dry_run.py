"""Dry runs of recorded calls: the offline provider answers from the recorded inputs, deterministically; a
live model gets the recorded messages or the current prompt rendered from the inputs, once, unrecorded."""

from __future__ import annotations

import pytest

from npcworld.llm import OFFLINE_MODEL, ChatParams, ChatReply, ProviderUnavailableError
from npcworld.llm.dry_run import DryRunError, RecordedCall, dry_run
from npcworld.llm.prompts import Message, ReflectionQuestionsInput, get_prompt

INPUTS = ReflectionQuestionsInput.model_validate({"npc_name": "Marta", "memories": [
    {"id": "m1", "description": "Marta baked bread for the party", "importance": 6},
    {"id": "m2", "description": "Tomas asked Marta about the party at the cafe", "importance": 7},
]})
TEMPLATE = get_prompt("reflection_questions")


class FakeProvider:
    """A chat provider that answers with a fixed text and remembers what it was sent."""

    name = "openai"

    def __init__(self, model: str, text: str = "", fail: bool = False) -> None:
        self.model, self.text, self.fail = model, text, fail
        self.sent: list[list[Message]] = []

    async def chat(self, messages: list[Message], params: ChatParams) -> ChatReply:
        self.sent.append(messages)
        if self.fail:
            raise ProviderUnavailableError("HTTP 503")
        return ChatReply(self.text, 120, 30)

    async def close(self) -> None:
        return None


def recorded(inputs: bool = True, messages: list[Message] | None = None) -> RecordedCall:
    return RecordedCall("reflection_questions", TEMPLATE.version, messages or TEMPLATE.render(INPUTS),
                        INPUTS.model_dump(mode="json") if inputs else None, {"temperature": 0.5})


async def test_the_offline_provider_answers_a_recorded_call_again_the_same_way() -> None:
    first, second = await dry_run(recorded(), None), await dry_run(recorded(), None)
    assert first.model == OFFLINE_MODEL and first.answer == second.answer and first.answer is not None
    assert first.messages == TEMPLATE.render(INPUTS) and first.tokens_in == first.tokens_out == 0


async def test_the_offline_provider_needs_the_recorded_inputs() -> None:
    with pytest.raises(DryRunError, match="without its template inputs"):
        await dry_run(recorded(inputs=False), None)


async def test_a_live_model_gets_the_recorded_messages_or_the_current_prompt() -> None:
    old = [{"role": "user", "content": "an older prompt version's text"}]
    provider = FakeProvider("other-model", '{"questions": ["Who is coming?", "Why bake?", "When?"]}')
    same = await dry_run(recorded(messages=old), provider, "recorded")
    assert provider.sent[-1] == old and same.prompt == f"reflection_questions@v{TEMPLATE.version}"
    assert same.answer == {"questions": ["Who is coming?", "Why bake?", "When?"]}
    assert (same.model, same.tokens_in, same.tokens_out) == ("other-model", 120, 30)
    current = await dry_run(recorded(messages=old), provider, "current")
    assert provider.sent[-1] == TEMPLATE.render(INPUTS) and current.prompt == TEMPLATE.key


async def test_a_live_failure_or_an_invalid_answer_is_shown_not_hidden() -> None:
    down = await dry_run(recorded(), FakeProvider("m", fail=True), "recorded")
    assert down.answer is None and down.error == "HTTP 503"
    chatty = await dry_run(recorded(), FakeProvider("m", "I would rather not."), "recorded")
    assert chatty.answer is None and chatty.error is not None and "does not validate" in chatty.error
