"""The prompt template: one versioned prompt kind with its input model, output model and rendering."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

__all__ = ["Message", "PromptTemplate"]

InT = TypeVar("InT", bound=BaseModel)
OutT = TypeVar("OutT", bound=BaseModel)
Message = dict[str, str]


@dataclass(frozen=True)
class PromptTemplate(Generic[InT, OutT]):
    """A prompt kind at one version. Change the text or the models => bump ``version``.

    ``fields`` turns validated inputs into the ``str.format`` variables of ``user``; ``check`` enforces
    rules that tie the output to the inputs (e.g. one score per memory) by raising ``ValueError``.
    """

    kind: str
    version: int
    system: str
    user: str
    input_model: type[InT]
    output_model: type[OutT]
    fields: Callable[[InT], Mapping[str, str]]
    check: Callable[[InT, OutT], None] | None = None
    temperature: float = 0.2
    max_tokens: int = 800

    @property
    def key(self) -> str:
        """``kind@vN``, the name of this exact template in records and logs."""
        return f"{self.kind}@v{self.version}"

    def render(self, inputs: InT) -> list[Message]:
        """The chat messages for ``inputs``."""
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user.format(**self.fields(inputs))},
        ]

    def json_schema(self) -> dict[str, Any]:
        """The output model's JSON Schema (sent when the provider is asked for ``json_schema`` output)."""
        schema: dict[str, Any] = json.loads(json.dumps(self.output_model.model_json_schema(), sort_keys=True))
        return schema

    def validate_output(self, inputs: InT, data: object) -> OutT:
        """Validate decoded JSON against the output model and the template's cross-checks.

        Raises:
            pydantic.ValidationError or ValueError: the output does not fit.
        """
        value = self.output_model.model_validate(data)
        if self.check is not None:
            self.check(inputs, value)
        return value
