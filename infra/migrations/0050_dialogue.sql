-- Dialogue service: who the NPCs are and what places they know (folded from events), conversations with
-- their transcripts, and relationship state per ordered pair (familiarity, sentiment 0-10).
CREATE TABLE dialogue_npcs (
    tenant_id text NOT NULL,
    world_id  text NOT NULL,
    npc_id    text NOT NULL,
    name      text NOT NULL,
    persona   text NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, world_id, npc_id)
);

CREATE TABLE dialogue_places (
    tenant_id text NOT NULL,
    world_id  text NOT NULL,
    npc_id    text NOT NULL,
    path      text NOT NULL,
    PRIMARY KEY (tenant_id, world_id, npc_id, path)
);

CREATE TABLE dialogue_conversations (
    conversation_id text        PRIMARY KEY,
    tenant_id       text        NOT NULL,
    world_id        text        NOT NULL,
    initiator       text        NOT NULL,
    target          text        NOT NULL,
    location_path   text,
    reason          text        NOT NULL DEFAULT '',
    started_at      timestamptz NOT NULL,
    ended_at        timestamptz,
    ended_by        text,
    lines           jsonb       NOT NULL DEFAULT '[]'::jsonb
);
CREATE INDEX dialogue_conversations_npc_idx ON dialogue_conversations (tenant_id, world_id, initiator, started_at);
CREATE INDEX dialogue_conversations_target_idx ON dialogue_conversations (tenant_id, world_id, target, started_at);

CREATE TABLE dialogue_relationships (
    tenant_id   text             NOT NULL,
    world_id    text             NOT NULL,
    npc_id      text             NOT NULL,
    other_id    text             NOT NULL,
    familiarity integer          NOT NULL DEFAULT 0 CHECK (familiarity >= 0),
    sentiment   double precision NOT NULL DEFAULT 5 CHECK (sentiment BETWEEN 0 AND 10),
    summary     text             NOT NULL DEFAULT '',
    last_talked timestamptz,
    PRIMARY KEY (tenant_id, world_id, npc_id, other_id)
);

-- The gateway waits for the reply to a player's line: find it by its cause, and wake the waiter at commit.
CREATE INDEX events_npc_replied_cause_idx ON events (causation_id) WHERE type = 'NpcReplied';
CREATE FUNCTION npc_replied_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('npcworld_npc_replied', NEW.causation_id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER npc_replied_inserted AFTER INSERT ON events
    FOR EACH ROW WHEN (NEW.type = 'NpcReplied') EXECUTE FUNCTION npc_replied_notify();
