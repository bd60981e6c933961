-- API keys limited to some worlds, keys that expire, and player session tokens (a key row for one player
-- in one world, scope chat, short-lived). NULL worlds: every world of the tenant; NULL expires_at: never.
ALTER TABLE gw_api_keys ADD COLUMN worlds text[];
ALTER TABLE gw_api_keys ADD COLUMN expires_at timestamptz;
ALTER TABLE gw_api_keys ADD COLUMN player_id text;
ALTER TABLE gw_api_keys ADD CONSTRAINT gw_api_keys_session_limited
    CHECK (player_id IS NULL OR (expires_at IS NOT NULL AND cardinality(worlds) = 1));
