"""Which LLM answers a scenario run, and the environment that makes the services answer so (pure).

``offline``: the offline provider. ``record``: the provider the environment configures (docs/llm.md), and the
calls are saved next to each scenario. ``replay``: answers only from those files. ``auto`` replays when every
scenario has a recording and runs offline when none has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from npcworld.llm import OFFLINE_MODEL

__all__ = ["LLMChoice", "LLMMode", "llm_env", "resolve_mode"]

LLMChoice = Literal["auto", "offline", "record", "replay"]
LLMMode = Literal["offline", "record", "replay"]


def resolve_mode(choice: LLMChoice, recorded: Mapping[str, bool]) -> LLMMode:
    """The mode for a run of the scenarios ``recorded`` (name → whether a recording lies next to it).

    Raises:
        ValueError: replay without a recording, or ``auto`` with only some scenarios recorded.
    """
    missing = sorted(name for name, has in recorded.items() if not has)
    if choice == "replay" and missing:
        raise ValueError(f"no recording to replay for: {', '.join(missing)} (record it with --llm record)")
    if choice != "auto":
        return choice
    if not missing:
        return "replay" if recorded else "offline"
    if len(missing) == len(recorded):
        return "offline"
    raise ValueError(f"only some scenarios have a recording (none for {', '.join(missing)}): "
                     "choose --llm offline, record or replay")


def llm_env(mode: LLMMode, calls: Sequence[Mapping[str, Any]] = ()) -> dict[str, str]:
    """Environment of the services for ``mode``; ``calls`` are the recordings to replay.

    A request hash covers the model and the response format, so a replay asks as the recorded run did: the
    recorded model (no provider is contacted in replay mode) and response format.

    Raises:
        ValueError: the recordings were made with different models or response formats.
    """
    if mode == "offline":
        return {"LLM_PROVIDER": "offline", "LLM_MODE": "live"}
    if mode == "record":
        return {"LLM_MODE": "live"}
    # Offline answers of a live run (fallbacks) carry the offline label; the run's own model is the other.
    models = {c["model"] for c in calls if c["provider"] != "offline"} or {OFFLINE_MODEL}
    formats = {c["parameters"].get("response_format") for c in calls if c["provider"] != "offline"}
    if len(models) > 1 or len(formats) > 1:
        raise ValueError(f"the recordings were made with different models or response formats "
                         f"({', '.join(sorted(models))}; {', '.join(sorted(map(str, formats)))}): "
                         "replay them in separate runs")
    (model,) = models
    if model == OFFLINE_MODEL:
        return {"LLM_MODE": "replay", "LLM_PROVIDER": "offline"}
    env = {"LLM_MODE": "replay", "LLM_PROVIDER": "openai", "LLM_MODEL": model}
    if formats and (fmt := next(iter(formats))):
        env["LLM_RESPONSE_FORMAT"] = str(fmt)
    return env
