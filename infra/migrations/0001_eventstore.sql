-- Event store (system of record), transactional outbox, consumer tracking and dead letters.

CREATE TABLE events (
    seq            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id       uuid        NOT NULL UNIQUE,
    stream_id      text        NOT NULL,
    version        integer     NOT NULL CHECK (version >= 1),
    type           text        NOT NULL,
    schema_version integer     NOT NULL,
    tenant_id      text        NOT NULL,
    world_id       text        NOT NULL,
    npc_id         text,
    world_time     timestamptz NOT NULL,
    recorded_at    timestamptz NOT NULL,
    causation_id   uuid,
    correlation_id uuid        NOT NULL,
    forked_from    uuid,
    trace          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    payload        jsonb       NOT NULL,
    UNIQUE (stream_id, version)
);
CREATE INDEX events_world_idx ON events (tenant_id, world_id, seq);
CREATE INDEX events_world_time_idx ON events (world_id, world_time);

-- Append-only: history is never rewritten (deleting a world is itself an event).
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the event store is append-only (% refused)', TG_OP;
END $$;
CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only();

-- Outbox rows carry the id of the transaction that wrote them; the relay only publishes rows whose
-- transaction is older than every transaction still running, so a sequence number that commits late
-- is never skipped and per-key order follows sequence order.
CREATE TABLE outbox (
    seq     bigint PRIMARY KEY REFERENCES events (seq),
    topic   text   NOT NULL,
    key     text,
    tx_id   xid8   NOT NULL DEFAULT pg_current_xact_id()
);
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('npcworld_outbox', '');
    RETURN NULL;
END $$;
CREATE TRIGGER outbox_inserted AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();

CREATE TABLE relay_state (
    name       text PRIMARY KEY,
    value      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Written in the same transaction as a consumer's effects: exactly-once effects.
CREATE TABLE processed_events (
    consumer     text        NOT NULL,
    event_id     uuid        NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, event_id)
);

CREATE TABLE dead_letters (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    consumer     text        NOT NULL,
    topic        text        NOT NULL,
    partition    integer     NOT NULL,
    "offset"     bigint      NOT NULL,
    event_id     uuid,
    event_type   text,
    reason       text        NOT NULL,
    value        bytea       NOT NULL,
    headers      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dead_letters_consumer_idx ON dead_letters (consumer, created_at);
