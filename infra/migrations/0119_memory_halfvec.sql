-- Memory vectors in half precision (pgvector halfvec, 2 bytes a dimension): a 384-dim vector takes 768
-- bytes instead of 1,536 in the row and in its HNSW index. Cosine distances between half-precision
-- vectors differ from the single-precision ones by about 1e-4, far below what separates memories in
-- retrieval. Queries cast their vector to halfvec as well, so an index expression matches.
-- The per-stream indexes are dropped here; the memory service builds them again (in the background,
-- CREATE INDEX CONCURRENTLY) for the streams that are large enough.
DROP INDEX IF EXISTS memories_embedding_384_hnsw;
DROP INDEX IF EXISTS memories_embedding_1536_hnsw;
DO $$
DECLARE
    name text;
BEGIN
    FOR name IN SELECT c.relname FROM pg_class AS c WHERE c.relkind = 'i' AND c.relname LIKE 'memories_hnsw_npc_%'
    LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', name);
    END LOOP;
END
$$;
UPDATE memory_npcs SET own_index = false WHERE own_index;
ALTER TABLE memories ALTER COLUMN embedding TYPE halfvec USING embedding::halfvec;
CREATE INDEX memories_embedding_384_hnsw ON memories
    USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops) WHERE embedding_dims = 384;
CREATE INDEX memories_embedding_1536_hnsw ON memories
    USING hnsw ((embedding::halfvec(1536)) halfvec_cosine_ops) WHERE embedding_dims = 1536;
