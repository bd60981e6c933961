-- Reflection service: each NPC's importance accumulator (DESIGN.md: reflect when the summed importance of
-- memories since the last reflection exceeds 150) and the run it is waiting for.

CREATE TABLE reflection_npcs (
    tenant_id       text        NOT NULL,
    world_id        text        NOT NULL,
    npc_id          text        NOT NULL,
    name            text,
    -- Importance of the counted memories since the last completed reflection.
    importance_sum  integer     NOT NULL DEFAULT 0 CHECK (importance_sum >= 0),
    -- Number of the latest run triggered for this NPC (runs are numbered 1, 2, ...).
    last_run        integer     NOT NULL DEFAULT 0 CHECK (last_run >= 0),
    -- The run triggered and not yet completed or failed; no new trigger while it is set.
    pending_run     integer,
    pending_since   timestamptz,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, world_id, npc_id)
);

-- Runs waiting for their job; the consumer enqueues them again when their Celery message may be lost.
CREATE INDEX reflection_npcs_pending ON reflection_npcs (pending_since) WHERE pending_run IS NOT NULL;
