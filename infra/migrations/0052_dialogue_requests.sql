-- Conversation requests in worlds whose clock is stepped wait for the next tick and are then resolved
-- together in a fixed order, so which of two simultaneous requests wins (A asks B while B asks A) never
-- depends on which partition the consumer happened to read first: same seed, same conversations.
CREATE TABLE dialogue_clocks (
    tenant_id text    NOT NULL,
    world_id  text    NOT NULL,
    stepped   boolean NOT NULL,
    PRIMARY KEY (tenant_id, world_id)
);

CREATE TABLE dialogue_requests (
    event_id   uuid        PRIMARY KEY,
    tenant_id  text        NOT NULL,
    world_id   text        NOT NULL,
    world_time timestamptz NOT NULL,
    initiator  text        NOT NULL,
    target     text        NOT NULL,
    envelope   jsonb       NOT NULL
);
CREATE INDEX dialogue_requests_world_idx ON dialogue_requests (tenant_id, world_id, world_time);
