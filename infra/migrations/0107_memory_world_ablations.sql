-- Memory the NPCs of a world never record (WorldCreated.ablations; evaluation only, the paper's ablated
-- architectures): the memory kinds the memory service drops before rating or storing them. A world without a
-- row records everything.
CREATE TABLE memory_world_ablations (
    tenant_id text NOT NULL,
    world_id text NOT NULL,
    kinds text[] NOT NULL,
    PRIMARY KEY (tenant_id, world_id)
);
