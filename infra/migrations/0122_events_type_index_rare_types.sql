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
-- Queries name their types as constants or bound parameters, so the planner proves the partial predicate
-- for each plan it makes for actual values (a generic plan, which cannot, costs more and is not chosen).
DROP INDEX events_type_idx;
CREATE INDEX events_type_idx ON events (tenant_id, world_id, type, seq)
    WHERE type NOT IN ('WorldTicked', 'StepCompleted', 'ObservationMade', 'MemoryRecorded', 'ActionDecided',
                       'PlacesDiscovered', 'ObjectStateChanged', 'MemoriesAccessed');
