-- A studio's rules over decided actions (ActionRulesSet), per world: the latest set, folded by world-state,
-- which judges every ActionDecided against it before the action takes effect.
CREATE TABLE ws_rules (
    tenant_id text  NOT NULL,
    world_id  text  NOT NULL,
    rules     jsonb NOT NULL,
    PRIMARY KEY (tenant_id, world_id)
);
