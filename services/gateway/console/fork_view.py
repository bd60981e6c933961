"""The console's fork comparison: ``/console/worlds/{fork}/fork-diff``, a fork beside its source world
(``forks``). Needs ``read`` and a key that reaches both worlds."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from npcworld.contracts import EVENT_TYPES
from services.gateway.console import reads
from services.gateway.console.forks import DIVERGENCE_WINDOW, compare
from services.gateway.console.web import Denied, guarded, page, read, signed_in

__all__ = ["router"]

router = APIRouter()
PAGE = 50


@router.get("/worlds/{world_id}/fork-diff")
@guarded
async def fork_diff(
    request: Request, world_id: str, npc: str = "", type: str = "", p: int = 0, f: int = 0, i: int = 0
) -> Response:
    key = await signed_in(request, world_id=world_id)
    w = await read(request, reads.world, key.tenant_id, world_id)
    if not w.exists or w.forked is None:
        raise Denied(page(request, "denied.html", key, status=404, reason=f"{world_id!r} is not a fork"))
    if not key.grant.reaches(str(w.forked["source_world_id"])):
        raise Denied(page(request, "denied.html", key, status=403, reason="this key cannot see its source"))
    types = tuple(t for t in type.split(",") if t in EVENT_TYPES)
    c = await read(request, compare, key.tenant_id, world_id, w.forked, npc_id=npc or None, types=types,
                   after=(max(p, 0), max(f, 0)), position=max(i, 0), limit=PAGE)
    # The fork's NPCs are the source's (copied), so the fork's names serve both sides.
    following = (c.source_rows[-1].seq if c.source_rows else p, c.fork_rows[-1].seq if c.fork_rows else f)
    return page(request, "fork.html", key, w=w, c=c, npc=npc, type=type, names=w.names,
                types=sorted(EVENT_TYPES), following=following, page_size=PAGE, window=DIVERGENCE_WINDOW)
