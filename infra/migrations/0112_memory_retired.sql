-- NPCs a designer retired (NpcRetired): the memory service records no new memory for them; what they
-- remembered before stays readable. Folded from events like the other memory tables.
CREATE TABLE memory_retired (
    tenant_id text NOT NULL,
    world_id  text NOT NULL,
    npc_id    text NOT NULL,
    PRIMARY KEY (tenant_id, world_id, npc_id)
);
