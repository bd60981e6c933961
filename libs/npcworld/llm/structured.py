"""Structured output: pull the JSON object out of a model's text and validate it against the template."""

from __future__ import annotations

import json
import re
from typing import Any

import pydantic
from pydantic import BaseModel

from npcworld.llm.prompts import PromptTemplate

__all__ = ["InvalidOutputError", "json_object", "parse_output", "response_format"]

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class InvalidOutputError(ValueError):
    """The text is not a JSON object that fits the template; the message says why, briefly."""


def json_object(text: str) -> object:
    """The JSON object in a model's answer (fenced, or with chatter around it).

    Raises:
        InvalidOutputError: there is none, or it is not valid JSON.
    """
    body = text.strip()
    if fenced := _FENCE.match(body):
        body = fenced.group(1)
    if not body.startswith("{"):
        # Tolerate chatter around the object ("Sure! {...}"), common with small local models.
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise InvalidOutputError("no JSON object in the answer")
        body = body[start : end + 1]
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise InvalidOutputError(f"invalid JSON: {exc}") from exc


def parse_output(template: PromptTemplate[Any, Any], inputs: BaseModel, text: str) -> BaseModel:
    """The validated output model found in ``text``.

    Raises:
        InvalidOutputError: not JSON, wrong shape, or fails the template's cross-checks.
    """
    data = json_object(text)
    try:
        value: BaseModel = template.validate_output(inputs, data)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise InvalidOutputError(f"schema mismatch: {problems}") from exc
    except ValueError as exc:
        raise InvalidOutputError(str(exc)) from exc
    return value


def response_format(template: PromptTemplate[Any, Any], mode: str) -> dict[str, Any] | None:
    """The ``response_format`` request field for ``mode`` (json_object, json_schema or none)."""
    if mode == "json_object":
        return {"type": "json_object"}
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": template.kind, "schema": template.json_schema(), "strict": False},
        }
    return None
