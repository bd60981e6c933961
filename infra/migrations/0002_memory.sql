-- Memory service: each NPC's memory stream (a projection of MemoryRecorded / MemoriesAccessed) and its indexes.

CREATE EXTENSION IF NOT EXISTS vector;

-- One row per NPC known to the memory service: persona for importance prompts, the embedding space its
-- vectors live in (fixed by the first memory; a different model needs the re-embed job) and a count that
-- picks exact or index-backed retrieval.
CREATE TABLE memory_npcs (
    npc_key          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id        text        NOT NULL,
    world_id         text        NOT NULL,
    npc_id           text        NOT NULL,
    name             text,
    persona          text        NOT NULL DEFAULT '',
    embedding_model  text,
    embedding_dims   integer     CHECK (embedding_dims > 0),
    memory_count     integer     NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, world_id, npc_id)
);

-- The vector column has no fixed dimension so that any model fits; each supported dimension gets a
-- partial expression HNSW index below (pgvector's documented pattern for mixed dimensions).
CREATE TABLE memories (
    memory_id        uuid        PRIMARY KEY,
    npc_key          bigint      NOT NULL REFERENCES memory_npcs (npc_key) ON DELETE CASCADE,
    tenant_id        text        NOT NULL,
    world_id         text        NOT NULL,
    npc_id           text        NOT NULL,
    kind             text        NOT NULL CHECK (kind IN ('observation', 'reflection', 'plan', 'dialogue', 'seed')),
    description      text        NOT NULL,
    importance       smallint    NOT NULL CHECK (importance BETWEEN 1 AND 10),
    created_at       timestamptz NOT NULL,
    location         text,
    subject          text,
    state_key        text,
    evidence         uuid[]      NOT NULL DEFAULT '{}',
    depth            integer     NOT NULL DEFAULT 0,
    embedding_model  text        NOT NULL,
    embedding_dims   integer     NOT NULL,
    embedding        vector      NOT NULL,
    source_event_id  uuid        NOT NULL,
    CHECK (vector_dims(embedding) = embedding_dims)
);

-- Last access changes on every retrieval, so it lives in a narrow table of its own: updating it never
-- writes a new version of the wide memory row (and so never touches the HNSW index). Importance is
-- copied here (it never changes) so the per-importance candidate lists are index-only scans.
CREATE TABLE memory_access (
    memory_id        uuid        PRIMARY KEY REFERENCES memories (memory_id) ON DELETE CASCADE,
    npc_key          bigint      NOT NULL REFERENCES memory_npcs (npc_key) ON DELETE CASCADE,
    importance       smallint    NOT NULL,
    last_accessed_at timestamptz NOT NULL
);
CREATE INDEX memory_access_importance_idx ON memory_access (npc_key, importance DESC, last_accessed_at DESC, memory_id);
CREATE INDEX memory_access_recency_idx ON memory_access (npc_key, last_accessed_at);

CREATE INDEX memories_npc_idx ON memories (npc_key);
-- Duplicate suppression: the latest observation of the same entity and place.
CREATE INDEX memories_state_idx ON memories (npc_key, state_key, created_at DESC) WHERE kind = 'observation';

CREATE INDEX memories_embedding_384_hnsw ON memories
    USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE embedding_dims = 384;
CREATE INDEX memories_embedding_1536_hnsw ON memories
    USING hnsw ((embedding::vector(1536)) vector_cosine_ops) WHERE embedding_dims = 1536;
