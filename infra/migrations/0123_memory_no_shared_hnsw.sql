-- No HNSW index over every NPC's memories: an index only for the streams that are searched through one.
--
-- Streams of up to MEMORY_EXACT_SCAN_MAX memories (5,000) are ranked by one exact scan and never read an
-- HNSW index, yet the shared index held a copy of every vector with its graph links (~490 bytes a memory,
-- a quarter of the memory tables in a simulated town whose streams were all small). A stream past the bound
-- now gets an index of its own (MEMORY_OWN_INDEX_MIN, 5,000 by default, built in the background as before);
-- until that is built its relevance search sorts the stream exactly.
DROP INDEX IF EXISTS memories_embedding_384_hnsw;
DROP INDEX IF EXISTS memories_embedding_1536_hnsw;
