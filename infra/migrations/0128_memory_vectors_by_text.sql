-- A world stores one vector per distinct memory text, not one per memory.
--
-- Many memories share their text: an NPC sees the same state again ("bed is in use: ..."), several NPCs see
-- the same thing, the same routine comes round the next day (in the 0.25-day demo run 3,262 memories had
-- 1,230 distinct texts). A vector is a function of its text and model, so memory_vectors keys it by
-- (world, model, text) digests and a memory row leaves its own column empty. The row keeps the vector only
-- in a stream with an HNSW index of its own (memory_npcs.in_row_vectors, set before that index is built),
-- for the index is partial on the stream's rows; memory_vectors holds every text's vector all the same, so a
-- rebuild or a replay embeds nothing that was embedded once.
--
-- The keys are 64-bit digests (hashtextextended); two texts of one world and model sharing a digest, about
-- 1 in 10^7 at a million distinct texts, would share a vector. A text is added once (ON CONFLICT DO NOTHING):
-- a writer adding a text another's open transaction is adding waits for it, which only instances of the
-- memory service working on different NPCs of one world can meet.
-- Deleting memories deletes the vectors no memory of the world still uses (forgetting a player, a designer's
-- forget or correction); deleting the world deletes all of its vectors.
CREATE FUNCTION memory_model_key(model text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT hashtextextended(model, 0) $$;
CREATE FUNCTION memory_text_key(description text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT hashtextextended(description, 0) $$;

CREATE TABLE memory_vectors (
    world_key bigint NOT NULL,
    model_key bigint NOT NULL,
    text_key bigint NOT NULL,
    embedding halfvec NOT NULL,
    PRIMARY KEY (world_key, model_key, text_key)
);

ALTER TABLE memory_npcs ADD COLUMN in_row_vectors boolean NOT NULL DEFAULT false;
UPDATE memory_npcs SET in_row_vectors = own_index;

INSERT INTO memory_vectors (world_key, model_key, text_key, embedding)
SELECT DISTINCT ON (1, 2, 3) world_key(n.tenant_id, n.world_id), memory_model_key(m.embedding_model),
       memory_text_key(m.description), m.embedding
FROM memories AS m JOIN memory_npcs AS n USING (npc_key)
WHERE m.embedding IS NOT NULL
ORDER BY 1, 2, 3;

ALTER TABLE memories ALTER COLUMN embedding DROP NOT NULL;
UPDATE memories SET embedding = NULL
WHERE npc_key IN (SELECT npc_key FROM memory_npcs WHERE NOT in_row_vectors);
