-- The delivery log and the dispatch cursor are the webhooks service's tables: named with its prefix (wh_),
-- as wh_subscriptions is, so no one takes them for the gateway's (gw_).
ALTER TABLE gw_deliveries RENAME TO wh_deliveries;
ALTER TABLE gw_delivery_attempts RENAME TO wh_delivery_attempts;
ALTER TABLE gw_dispatch_cursor RENAME TO wh_dispatch_cursor;
ALTER INDEX gw_deliveries_due_idx RENAME TO wh_deliveries_due_idx;
ALTER INDEX gw_deliveries_webhook_idx RENAME TO wh_deliveries_webhook_idx;
