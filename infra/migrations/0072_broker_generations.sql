-- Broker generations. The embedded broker keeps every record batch in memory and gets slower as its
-- partitions grow (its memory storage has no DeleteRecords), so a long run replaces it with an empty one
-- from time to time (npcworld/embedded/rotation.py). Each replacement is a generation: its checkpoint is a
-- sequence number up to which every live consumer had processed every event, so the relay republishes
-- only what came after it. Each consumer loop stops its Kafka consumer when a new generation appears and
-- says in its heartbeat that it is parked on it; once the new broker is up (ready_at, set by the relay
-- that starts on it) the loop starts a fresh consumer.
CREATE TABLE broker_generations (
    generation     bigint      PRIMARY KEY,
    checkpoint_seq bigint      NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    ready_at       timestamptz
);

ALTER TABLE consumer_heartbeats ADD COLUMN generation bigint NOT NULL DEFAULT 0,
                                ADD COLUMN parked boolean NOT NULL DEFAULT false;
