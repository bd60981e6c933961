-- A stepped world's held memory writes are released in short transactions (services/memory/holding.py). The
-- events each of them appends wait here instead of in the outbox until the whole release is done, then move to
-- the outbox together: other services see a step's memories all at once (as when the release was one long
-- transaction), while the relay goes on publishing everything else in between.
CREATE TABLE memory_unpublished (
    seq       bigint PRIMARY KEY REFERENCES events (seq),
    tenant_id text   NOT NULL,
    world_id  text   NOT NULL,
    topic     text   NOT NULL,
    key       text
);
CREATE INDEX memory_unpublished_world_idx ON memory_unpublished (tenant_id, world_id);
