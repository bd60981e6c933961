-- Forgetting a player by crypto-shredding (npcworld.shredding). Each player of a tenant has a data key; the
-- words the player originated are stored in the event log sealed (AES-256-GCM) with it, and opened on read.
-- Forgetting a player deletes its key, so every copy of those words in the log (forks included) becomes
-- unreadable, and leaves a tombstone so nothing later stores the player's words again under a new key.
CREATE TABLE player_keys (
    tenant_id  text        NOT NULL,
    player_id  text        NOT NULL,
    key_id     uuid        NOT NULL UNIQUE,
    key        bytea       NOT NULL CHECK (octet_length(key) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, player_id)
);

CREATE TABLE forgotten_players (
    tenant_id    text        NOT NULL,
    player_id    text        NOT NULL,
    forgotten_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, player_id)
);
