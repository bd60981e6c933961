-- The webhooks service's own subscriptions: a fold of the gateway's WebhookRegistered / WebhookChanged /
-- WebhookDeleted events (services/webhooks/subscriptions.py), so the dispatcher no longer reads the gateway's
-- gw_webhooks. from_seq: the subscription receives the world's events stored after it.
CREATE TABLE wh_subscriptions (
    webhook_id  text    PRIMARY KEY,
    tenant_id   text    NOT NULL,
    world_id    text    NOT NULL,
    url         text    NOT NULL,
    event_types text[]  NOT NULL DEFAULT '{}',
    active      boolean NOT NULL,
    from_seq    bigint  NOT NULL
);
CREATE INDEX wh_subscriptions_world_idx ON wh_subscriptions (tenant_id, world_id);

-- Subscriptions from before these events: each gets a WebhookRegistered event that keeps where it started
-- (after_seq), a row and the dispatcher's claim on the event, so it keeps receiving exactly what it would
-- have and a rebuild from the events gives the same rows. Deleted ones stay only in the gateway's log.
CREATE TEMPORARY TABLE wh_backfill ON COMMIT DROP AS
SELECT w.*, md5('WebhookRegistered/' || w.webhook_id)::uuid AS event_id,
       coalesce((SELECT max(e.world_time) FROM events e
                 WHERE e.tenant_id = w.tenant_id AND e.world_id = w.world_id), w.created_at) AS world_time
FROM gw_webhooks w WHERE w.deleted_at IS NULL;

INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id, world_time,
                    recorded_at, correlation_id, payload)
SELECT event_id, tenant_id || '/webhook-' || webhook_id, 1, 'WebhookRegistered', 1, tenant_id, world_id,
       world_time, now(), event_id,
       jsonb_build_object(
           'subscription', jsonb_build_object('webhook_id', webhook_id, 'url', url,
                                              'event_types', to_jsonb(event_types), 'description', description,
                                              'active', active),
           'after_seq', from_seq)
FROM wh_backfill ORDER BY created_at, webhook_id;

INSERT INTO wh_subscriptions (webhook_id, tenant_id, world_id, url, event_types, active, from_seq)
SELECT webhook_id, tenant_id, world_id, url, event_types, active, from_seq FROM wh_backfill;

INSERT INTO processed_events (consumer, event_id) SELECT 'webhooks', event_id FROM wh_backfill
ON CONFLICT DO NOTHING;

-- Signing secrets leave the gateway's table for the shared core's, kept out of the event log
-- (npcworld.egress.secrets), where the dispatcher reads them.
INSERT INTO egress_secrets (owner_id, tenant_id, secret)
SELECT webhook_id, tenant_id, secret FROM gw_webhooks ON CONFLICT (owner_id) DO NOTHING;
ALTER TABLE gw_webhooks DROP COLUMN secret, DROP COLUMN from_seq;

-- Deliveries no longer point into the gateway's table; a redelivery waits until the dispatcher has folded
-- every event stored before it was asked for (a URL changed just before goes to the new URL).
ALTER TABLE gw_deliveries DROP CONSTRAINT gw_deliveries_webhook_id_fkey,
    ADD COLUMN redrive_after_seq bigint NOT NULL DEFAULT 0;
