-- planning: one row per NPC holding its planner state (persona, known places, goals, promises, today's
-- plan, the current chunk's actions and the current action). due_at is when the current action ends
-- (NULL = the NPC needs an action now); the world tick looks up due NPCs by it.
CREATE TABLE planning_npcs (
    tenant_id  text        NOT NULL,
    world_id   text        NOT NULL,
    npc_id     text        NOT NULL,
    name       text        NOT NULL,
    state      jsonb       NOT NULL,
    due_at     timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, world_id, npc_id)
);
CREATE INDEX planning_npcs_due_idx ON planning_npcs (tenant_id, world_id, due_at);
