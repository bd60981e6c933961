-- The relay publishes every committed outbox row at once (docs/architecture.md, "Outbox relay"): it no
-- longer compares a row's writing transaction with the oldest one still running, so the column goes.
ALTER TABLE outbox DROP COLUMN tx_id;
