-- Which consumer loops are alive and which event types each one handles. A stepped world clock waits until
-- every live consumer has processed (or dead-lettered) every event of its types, so a step never starts
-- while the previous one is still being digested (services/world_state/quiescence.py).

CREATE TABLE consumer_heartbeats (
    consumer   text        PRIMARY KEY,
    types      text[]      NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    seen_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX dead_letters_event_idx ON dead_letters (consumer, event_id);
