-- The (world, type) index led by the world's 8-byte digest, like the event store's other world indexes
-- (migration 0124), and a small index of its own for the reads across a tenant's worlds.
--
-- Its entries held the tenant (36 characters) and the world id in full, ~180 bytes an event in pages that
-- appends in the middle of the index leave half full; led by world_key(tenant, world) they take ~40. Reads of
-- one world say in_world(), which the planner matches to the digest. The few reads that span a tenant's
-- worlds name the types they look for (its world list: worlds created and deleted; forgetting a player: the
-- player's lines and relationships, and whom it was forgotten in), and only those types are in the tenant's
-- index.
DROP INDEX events_type_idx;
CREATE INDEX events_type_idx ON events (world_key(tenant_id, world_id), type, seq)
    WHERE type NOT IN ('WorldTicked', 'StepCompleted', 'ObservationMade', 'MemoryRecorded', 'ActionDecided',
                       'PlacesDiscovered', 'ObjectStateChanged', 'MemoriesAccessed');
CREATE INDEX events_tenant_type_idx ON events (tenant_id, type, world_id, seq)
    WHERE type IN ('WorldCreated', 'WorldDeleted', 'PlayerSpoke', 'NpcReplied', 'RelationshipChanged',
                   'PlayerForgotten');
