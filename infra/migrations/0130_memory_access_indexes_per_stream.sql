-- The memory accesses' importance and recency indexes only for the streams that read them.
--
-- memory_access had two indexes over every stream, (npc, importance, last access, memory) and (npc, last
-- access), read only by the index path of streams large enough to have an HNSW index of their own (5,000
-- memories); an exact scan reads a stream's accesses by key. They were more than half of the table's size,
-- and as both hold the access time, every access rewrote the row with a new entry in each index (the
-- primary key's too). They are now partial indexes of each large stream, built with its HNSW index by the
-- memory service's upkeep (services/memory/repository/_indexes.py), so an access to a smaller stream's
-- memory is a HOT update that adds no index entry at all, given room on its page: pages are filled to 90 %.
DROP INDEX memory_access_importance_idx;
DROP INDEX memory_access_recency_idx;
ALTER TABLE memory_access SET (fillfactor = 90);
DO $$
DECLARE
    key bigint;
BEGIN
    FOR key IN SELECT npc_key FROM memory_npcs WHERE own_index LOOP
        EXECUTE format('CREATE INDEX %I ON memory_access (importance DESC, last_accessed_at DESC, memory_id)'
                       ' WHERE npc_key = %s', 'memory_access_prior_npc_' || key, key);
        EXECUTE format('CREATE INDEX %I ON memory_access (last_accessed_at) WHERE npc_key = %s',
                       'memory_access_recency_npc_' || key, key);
    END LOOP;
END $$;
