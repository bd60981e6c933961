"""Storage per NPC-day: what every table (with its indexes and TOAST) grew by while the town was simulated.

Sizes are read when the clock starts (the town loaded) and after the last step has settled; the growth is
what the simulated time cost. Page packing and vacuum timing move the figure by a few pages from run to run,
so it is reported beside the deterministic metrics, not among them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["storage_figures", "table_sizes"]

_SIZES = """
SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
"""
_LARGEST = 6  # tables named in the report


async def table_sizes(conn: Any) -> dict[str, int]:
    """Bytes on disk of every table of the stack's database, indexes and TOAST included."""
    cur = await conn.execute(_SIZES)
    return {str(name): int(size) for name, size in await cur.fetchall()}


def storage_figures(before: Mapping[str, int], after: Mapping[str, int], npc_days: float) -> dict[str, Any]:
    """Growth between two ``table_sizes`` readings, in MB (10^6 bytes) in all and per NPC-day, with the
    largest tables' share per NPC-day."""
    grown = {t: after[t] - before.get(t, 0) for t in after if after[t] - before.get(t, 0) > 0}
    total = sum(grown.values()) / 1e6
    scale = max(npc_days, 1e-9)
    largest = sorted(grown.items(), key=lambda kv: (-kv[1], kv[0]))[:_LARGEST]
    return {
        "mb": round(total, 2),
        "mb_per_npc_day": round(total / scale, 2),
        "largest_tables_mb_per_npc_day": {t: round(n / 1e6 / scale, 2) for t, n in largest},
    }
