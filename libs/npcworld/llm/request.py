"""Preparing a call: validated inputs, rendered messages, parameters and the stable request hash."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pydantic
from pydantic import BaseModel

from npcworld.errors import ValidationError
from npcworld.llm.prompts import Message, PromptTemplate, get_prompt

__all__ = ["PreparedCall", "prepare", "request_hash"]


@dataclass(frozen=True)
class PreparedCall:
    """Everything that identifies a request, before any provider sees it."""

    template: PromptTemplate[Any, Any]
    inputs: BaseModel
    messages: list[Message]
    parameters: dict[str, Any]
    model: str
    request_hash: str


def request_hash(prompt: str, model: str, parameters: Mapping[str, Any], messages: list[Message]) -> str:
    """SHA-256 of the canonical JSON of template (kind@version), model, parameters and messages."""
    canonical = json.dumps(
        {"prompt": prompt, "model": model, "parameters": parameters, "messages": messages},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def prepare(
    kind: str,
    inputs: BaseModel | Mapping[str, Any],
    output_model: type[BaseModel],
    *,
    model: str,
    parameters: Mapping[str, Any],
) -> PreparedCall:
    """Validate ``inputs`` against the template of ``kind`` and render it.

    Raises:
        KeyError / TypeError: unknown kind, or ``output_model`` is not the kind's output model.
        ValidationError: the inputs do not fit the template's input model (``field`` names the culprit).
    """
    template = get_prompt(kind, output_model)
    data = inputs.model_dump() if isinstance(inputs, BaseModel) else inputs
    try:
        validated: BaseModel = template.input_model.model_validate(data)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise ValidationError(f"{template.key} inputs: {first['msg']}", field=field) from exc
    messages = template.render(validated)
    params = dict(parameters)
    return PreparedCall(
        template, validated, messages, params, model, request_hash(template.key, model, params, messages)
    )
