"""The console's "re-run this decision": ``POST /console/why/{event}/calls/{call}/rerun`` answers a recorded
model call again as a dry run (``npcworld.llm.dry_run``) with the offline provider or a live model, and shows
the recorded and the new answer side by side. Needs ``admin`` and the form's CSRF token.

Nothing is written: no event, no call record, no retrieval (the recorded inputs hold what was retrieved) and
no budget charge. A live re-run is refused while the world's token budget is spent, and its tokens are logged.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from npcworld.errors import ConfigError
from npcworld.eventlog import Call, Explanation, explain, memories_from_log
from npcworld.llm import (
    OFFLINE_MODEL,
    LLMCallRepository,
    LLMSettings,
    OpenAIProvider,
    exhausted,
    load_llm_settings,
)
from npcworld.llm.dry_run import DryRun, DryRunError, RecordedCall, dry_run
from npcworld.llm.prompts import PROMPTS
from services.gateway.console import reads
from services.gateway.console.session import COOKIE, valid_csrf
from services.gateway.console.web import Denied, form, guarded, page, read, signed_in, signer

__all__ = ["options", "router"]

logger = logging.getLogger(__name__)
router = APIRouter()
_MODEL = re.compile(r"^[A-Za-z0-9._:/@-]{1,100}$")


def _live(request: Request) -> LLMSettings | None:
    """The deployment's live provider settings (the gateway's environment), None when it answers offline."""
    if not hasattr(request.app.state, "console_llm"):
        try:
            found: LLMSettings | None = load_llm_settings()
        except ConfigError:
            logger.warning("console re-runs: invalid LLM settings, offline re-runs only", exc_info=True)
            found = None
        request.app.state.console_llm = found if found is not None and found.provider == "openai" else None
    live: LLMSettings | None = request.app.state.console_llm
    return live


def options(request: Request) -> dict[str, Any]:
    """What the why page offers a re-run: the live model (None: offline only), each kind's current version."""
    live = _live(request)
    return {"offline": OFFLINE_MODEL, "live_model": live.llm_model if live else None,
            "versions": {kind: t.version for kind, t in PROMPTS.items()}}


async def _recorded(
    request: Request, tenant_id: str, event_id: str, call_id: int
) -> tuple[Explanation, Call]:
    try:
        x = await read(request, explain, uuid.UUID(event_id), memories_from_log, tenant_id)
    except ValueError:
        x = None
    call = next((c for c in x.calls if c.id == call_id), None) if x is not None else None
    if x is None or call is None:
        raise Denied(page(request, "denied.html", None, status=404, reason=f"no call {call_id} behind it"))
    return x, call


async def _answer(request: Request, tenant_id: str, call: Call, model: str, prompt: str) -> DryRun:
    live = _live(request)
    if model == OFFLINE_MODEL:
        return await dry_run(_of(call), None, "current")
    if live is None or not _MODEL.match(model):
        raise DryRunError("no live model provider is configured here: only the offline provider can re-run"
                          if live is None else f"not a model name: {model!r}")
    usage = await LLMCallRepository(request.app.state.pool).usage(tenant_id, call.world_id)
    if (spent := exhausted(usage, live.llm_tenant_token_budget, live.llm_world_token_budget)) is not None:
        raise DryRunError(f"the {spent.scope}'s token budget is spent"
                          f" ({spent.used_tokens} of {spent.limit_tokens} tokens)")
    provider = OpenAIProvider(model=model, base_url=live.openai_base_url, api_key=live.openai_api_key,
                              timeout_s=live.llm_timeout_s)
    try:
        return await dry_run(_of(call), provider, "current" if prompt == "current" else "recorded")
    finally:
        await provider.close()


def _of(call: Call) -> RecordedCall:
    return RecordedCall(call.prompt_kind, call.template_version, call.request, call.inputs, call.parameters)


@router.post("/why/{event_id}/calls/{call_id}/rerun")
@guarded
async def rerun(request: Request, event_id: str, call_id: int) -> Response:
    key = await signed_in(request, "admin")
    fields = await form(request)
    if not valid_csrf(signer(request), request.cookies.get(COOKIE), fields.get("csrf")):
        return page(request, "denied.html", key, status=403, reason="the form expired: reload the page")
    x, call = await _recorded(request, key.tenant_id, event_id, call_id)
    if not key.grant.reaches(x.event.world_id):
        return page(request, "denied.html", key, status=404, reason=f"no event {event_id}")
    model = fields.get("model") or OFFLINE_MODEL
    model = fields.get("other_model", "").strip() if model == "other" else model
    try:
        result = await _answer(request, key.tenant_id, call, model, fields.get("prompt", "recorded"))
    except DryRunError as exc:
        return page(request, "denied.html", key, status=422, reason=f"cannot re-run: {exc}")
    logger.info("console dry run of call %s (world %s) with %s/%s: %d+%d tokens", call.id, x.event.world_id,
                result.provider, result.model, result.tokens_in, result.tokens_out)
    names = (await read(request, reads.world, key.tenant_id, x.event.world_id)).names
    return page(request, "rerun.html", key, x=x, c=call, r=result, names=names, old=_sorted(call.response),
                new=_sorted(result.answer), differs=_differing(call.response, result.answer))


def _sorted(answer: Any) -> Any:
    """The answer with its keys in one order on both sides (the database keeps its own order)."""
    return json.loads(json.dumps(answer, sort_keys=True))


def _differing(old: Any, new: Any) -> list[str]:
    """The answer's top-level fields that differ (``answer``: the answers are of different shapes)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [k for k in sorted({*old, *new}) if old.get(k) != new.get(k)]
    return [] if old == new else ["answer"]
