-- gateway: tenants and their API keys (stored as SHA-256 hashes, never in clear).
CREATE TABLE gw_tenants (
    tenant_id  text PRIMARY KEY,
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE gw_api_keys (
    key_id     text PRIMARY KEY,
    tenant_id  text NOT NULL REFERENCES gw_tenants (tenant_id),
    key_hash   bytea NOT NULL UNIQUE,
    scopes     text[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
