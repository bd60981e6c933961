"""Scripted replies of the fake OpenAI server, and the default responder that answers each prompt kind."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Reply", "structured_responder"]

_NUMBERED = re.compile(r"^\d+\. ", re.MULTILINE)
_PER_CHARACTER = re.compile(r"^Memories \((\d+)\):$", re.MULTILINE)


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a chat message (``content``) or an HTTP error, optionally after a delay."""

    status: int = 200
    content: str | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    tokens_in: int = 20
    tokens_out: int = 10

    @classmethod
    def json(cls, data: Any, **kwargs: Any) -> Reply:
        """A message whose content is ``data`` as JSON."""
        return cls(content=json.dumps(data), **kwargs)

    @classmethod
    def text(cls, content: str, **kwargs: Any) -> Reply:
        """A message with raw ``content`` (e.g. malformed JSON)."""
        return cls(content=content, **kwargs)

    @classmethod
    def error(cls, status: int, retry_after: str | None = None, **kwargs: Any) -> Reply:
        """An HTTP error (429, 500, 503...), with a Retry-After header when given."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status=status, headers=headers, **kwargs)

    @classmethod
    def slow(cls, delay_s: float, reply: Reply | None = None) -> Reply:
        """``reply`` (default: an empty JSON object) after ``delay_s`` seconds."""
        base = reply or cls(content="{}")
        return cls(base.status, base.content, delay_s, base.headers, base.tokens_in, base.tokens_out)


def _first_user_message(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        if message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def structured_responder(body: dict[str, Any], prompt: str, importance: int = 5) -> Reply:
    """A valid answer for each prompt kind of this project (the prompt comes from X-Npcworld-Prompt):
    ``importance`` scores every numbered memory; questions and insights are fixed text citing the
    numbered statements. Other prompts get an empty object."""
    kind = prompt.split("@", 1)[0]
    count = len(_NUMBERED.findall(_first_user_message(body)))
    if kind == "importance":
        return Reply.json({"scores": [importance] * count})
    if kind == "importance_batch":
        counts = [int(n) for n in _PER_CHARACTER.findall(_first_user_message(body))]
        return Reply.json({"scores": [[importance] * n for n in counts]})
    if kind == "reflection_questions":
        return Reply.json(
            {"questions": [f"What is the fake model's question number {i}?" for i in (1, 2, 3)]}
        )
    if kind == "reflection_insights":
        insights = [
            {"text": f"Fake insight {i} about the statements", "evidence": sorted({1, min(i, max(count, 1))})}
            for i in range(1, 6)
        ]
        return Reply.json({"insights": insights})
    return Reply.json({})
