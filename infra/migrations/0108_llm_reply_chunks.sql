-- Streaming replies: the text of a player reply as the LLM layer produces it (words offline, tokens from an
-- OpenAI-compatible server), keyed by the chat (the PlayerSpoke event the reply answers) and numbered from 1.
-- Written outside any transaction by the service that asks for the reply, read by the gateway's per-chat SSE
-- stream; the validated reply itself is the NpcReplied event, as before. Rows are derived and short-lived.
CREATE TABLE llm_reply_chunks (
    cause_id   uuid        NOT NULL,
    seq        integer     NOT NULL CHECK (seq >= 1),
    tenant_id  text        NOT NULL,
    world_id   text        NOT NULL,
    text       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (cause_id, seq)
);
CREATE INDEX llm_reply_chunks_created_idx ON llm_reply_chunks (created_at);
