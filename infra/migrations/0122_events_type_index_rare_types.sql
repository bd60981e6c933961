-- The (world, type) index covers the types that are rare in a world's log, not the ones every step writes.
--
-- A world's log is mostly a few types written each step or for each NPC each few steps: ticks, perceptions,
-- memories, decided actions, places and object states, batched memory accesses. They were 86 % of the
-- events of a simulated town and their entries in this index (the largest of the event store's, ~180 bytes
-- an event: appends in the middle of the index leave its pages half full) are never what a read needs: a
-- read of one of them by type finds one in every few events walking the world's log by seq, and the reads
-- that need them by NPC or by cause have indexes of their own. What the index is for stays in it: the
-- designer's settings (canon, rules, validators), worlds created and deleted, players' lines, and what the
-- console's timeline walks by type (moves, started actions), each a needle in a long log.
--
-- The planner uses a partial index only where it can prove the predicate from the query: a type written in
-- the query text, or a bound parameter in a plan made for its value. Reads that pass their types as a
-- parameter (EventStore.read_all, the gateway's event listing) are therefore never prepared: a generic plan,
-- made without the value, would walk the world's log instead.
DROP INDEX events_type_idx;
CREATE INDEX events_type_idx ON events (tenant_id, world_id, type, seq)
    WHERE type NOT IN ('WorldTicked', 'StepCompleted', 'ObservationMade', 'MemoryRecorded', 'ActionDecided',
                       'PlacesDiscovered', 'ObjectStateChanged', 'MemoriesAccessed');
