-- A retrieval repeated for the same cause (a handler prepared before its transaction and then run again after
-- a crash or a rebalance) is recorded once: the memory service looks for an identical MemoriesAccessed of
-- that cause before appending one.
CREATE INDEX events_memories_accessed_cause_idx ON events (causation_id) WHERE type = 'MemoriesAccessed';
