"""Each service's tables are touched only by its own code: every SQL text in libs/npcworld and services/
is read for the tables it names, and a table of service S named outside services/S is a crossing.

The launcher (``launcher/``: ``npcworld run`` and its progress lines, the demo, ``simulate``, ``npcworld
why``) is ops tooling above the services and, like the tests, may read any table; it is not read here.
The crossings that remain are listed in ``KNOWN`` with where they go next; the list only shrinks. A new
crossing fails, and so does a listed one that no longer happens (so the list stays true).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SQL = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE|EXISTS)\s+([a-z_][a-z0-9_]*)", re.IGNORECASE)

# Tables of the shared core (event store and forks' lineage, outbox, consumer bookkeeping, LLM records,
# signing secrets of outgoing calls, players' data keys): the library's.
LIBRARY = frozenset({
    "events", "outbox", "relay_state", "processed_events", "dead_letters", "consumer_heartbeats",
    "broker_generations", "llm_calls", "llm_budgets", "llm_reply_chunks", "schema_migrations", "held_work",
    "egress_secrets", "player_keys", "forgotten_players", "claim_watermarks", "world_lineage", "fork_folds",
})
_BY_PREFIX = {
    "ws_": "world_state", "pc_": "perception", "memory_": "memory", "memories": "memory",
    "planning_": "planning", "dialogue_": "dialogue", "reflection_": "reflection",
    "wh_": "webhooks",
}
_GW = {
    "gw_tenants": "gateway", "gw_api_keys": "gateway", "gw_idempotency": "gateway", "gw_webhooks": "gateway",
    # The gateway's read models of the simulation, folded from events (services/gateway/handlers.py).
    "gw_clocks": "gateway", "gw_world_starts": "gateway", "gw_trees": "gateway", "gw_objects": "gateway",
    "gw_npcs": "gateway", "gw_known_places": "gateway", "gw_plans": "gateway", "gw_relationships": "gateway",
    # The webhooks service's tables under their first names (wh_deliveries, ... since migration 0116).
    "gw_deliveries": "webhooks", "gw_delivery_attempts": "webhooks", "gw_dispatch_cursor": "webhooks",
}

# (code, table) crossings still to remove, and where each goes next.
KNOWN: dict[tuple[str, str], str] = {
}


def tables() -> set[str]:
    """Every table the migrations create."""
    return {m.lower() for f in ROOT.glob("infra/migrations/*.sql")
            for m in re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)", f.read_text(), re.I)}


def owner(table: str) -> str | None:
    if table in LIBRARY:
        return "npcworld"
    if table in _GW:
        return _GW[table]
    return next((svc for prefix, svc in _BY_PREFIX.items() if table.startswith(prefix)), None)


def _code(path: Path) -> str:
    rel = path.relative_to(ROOT).parts
    return rel[1] if rel[0] == "services" else "npcworld"


def crossings() -> dict[tuple[str, str], set[str]]:
    """(code, table) → the files where code of one owner names a table of another service."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    known_tables = tables()
    files = [*ROOT.glob("libs/npcworld/**/*.py"), *ROOT.glob("services/**/*.py")]
    for path in files:
        code = _code(path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            for table in _SQL.findall(node.value):
                table = table.lower()
                who = owner(table) if table in known_tables else None
                if who is not None and who not in (code, "npcworld"):
                    found[(code, table)].add(str(path.relative_to(ROOT)))
    return found


def test_no_code_touches_another_services_tables_beyond_the_known_crossings() -> None:
    found = crossings()
    new = {k: sorted(v) for k, v in found.items() if k not in KNOWN}
    assert not new, f"tables of another service named in SQL (code, table) → files: {new}"


def test_every_known_crossing_still_happens() -> None:
    gone = sorted(set(KNOWN) - set(crossings()))
    assert not gone, f"these crossings are gone: remove them from KNOWN: {gone}"


def test_every_table_of_the_migrations_has_an_owner() -> None:
    created = tables()
    assert created and not {t for t in created if owner(t) is None}
