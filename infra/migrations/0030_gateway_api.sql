-- gateway: named keys with optional per-key rate limits, idempotent POSTs, webhook subscriptions and deliveries.
ALTER TABLE gw_api_keys ADD COLUMN name text NOT NULL DEFAULT '';
ALTER TABLE gw_api_keys ADD COLUMN rate_per_second double precision CHECK (rate_per_second > 0);
ALTER TABLE gw_api_keys ADD COLUMN burst integer CHECK (burst >= 1);
CREATE INDEX gw_api_keys_tenant_idx ON gw_api_keys (tenant_id, created_at, key_id);

-- One row per (tenant, Idempotency-Key); status_code NULL while the first request is still running.
CREATE TABLE gw_idempotency (
    tenant_id    text        NOT NULL,
    key          text        NOT NULL,
    method       text        NOT NULL,
    path         text        NOT NULL,
    body_hash    bytea       NOT NULL,
    status_code  integer,
    headers      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    body         bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, key)
);
CREATE INDEX gw_idempotency_expiry_idx ON gw_idempotency (expires_at);

-- Subscriptions see events with seq > from_seq (nothing from before they existed).
CREATE TABLE gw_webhooks (
    webhook_id  text        PRIMARY KEY,
    tenant_id   text        NOT NULL,
    world_id    text        NOT NULL,
    url         text        NOT NULL,
    event_types text[]      NOT NULL DEFAULT '{}',
    secret      text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    active      boolean     NOT NULL DEFAULT true,
    from_seq    bigint      NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    deleted_at  timestamptz
);
CREATE INDEX gw_webhooks_world_idx ON gw_webhooks (tenant_id, world_id) WHERE deleted_at IS NULL;

-- Deliveries are rows: a crash loses nothing, a claimed row whose lease lapses is tried again.
CREATE TABLE gw_deliveries (
    delivery_id      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id       text        NOT NULL REFERENCES gw_webhooks (webhook_id),
    tenant_id        text        NOT NULL,
    world_id         text        NOT NULL,
    event_id         uuid        NOT NULL,
    seq              bigint      NOT NULL,
    event_type       text        NOT NULL,
    status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_status_code integer,
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    delivered_at     timestamptz,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX gw_deliveries_due_idx ON gw_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX gw_deliveries_webhook_idx ON gw_deliveries (webhook_id, delivery_id);

CREATE TABLE gw_delivery_attempts (
    delivery_id  bigint      NOT NULL REFERENCES gw_deliveries (delivery_id),
    attempt      integer     NOT NULL,
    status_code  integer,
    error        text,
    duration_ms  double precision NOT NULL,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (delivery_id, attempt, attempted_at)
);

-- How far the dispatcher has fanned events out into deliveries (one row, locked while it works).
CREATE TABLE gw_dispatch_cursor (
    name text   PRIMARY KEY,
    seq  bigint NOT NULL
);
INSERT INTO gw_dispatch_cursor (name, seq) VALUES ('webhooks', 0);
