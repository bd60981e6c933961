-- A world's validator webhook over decided actions (ActionValidatorSet), folded by world-state, which POSTs
-- every decided action it applies to before the action takes effect.
CREATE TABLE ws_validators (
    tenant_id text  NOT NULL,
    world_id  text  NOT NULL,
    validator jsonb NOT NULL,
    PRIMARY KEY (tenant_id, world_id)
);

-- Signing secrets of outgoing calls, kept out of the event log (npcworld.egress.secrets): the gateway
-- stores a validator's when it is registered (shown to the studio once), world-state reads it to sign its
-- calls. A fork's copy of the registration names the same validator, so it finds the same secret.
CREATE TABLE egress_secrets (
    owner_id     text        PRIMARY KEY,
    tenant_id    text        NOT NULL,
    secret       text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
