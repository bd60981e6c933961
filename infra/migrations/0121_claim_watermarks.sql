-- Consumers' settled claims folded into a watermark (libs/npcworld/eventstore/claims.py): an event is claimed
-- by a consumer when it has a processed_events row, or when its sequence number is at or below the
-- consumer's watermark. The rows below it are deleted as the watermark moves, so claims no longer grow
-- with the log (they were about 2.6 rows, ~0.55 MB per NPC-day).
--
-- candidate_*: the newest sequence number a fold saw and its snapshot's xmax; a later fold uses it once
-- every transaction running then has ended (no event at or below it can still commit).
CREATE TABLE claim_watermarks (
    consumer       text        PRIMARY KEY,
    seq            bigint      NOT NULL DEFAULT 0,
    candidate_seq  bigint,
    candidate_xmax xid8,
    candidate_at   timestamptz,
    updated_at     timestamptz NOT NULL DEFAULT now()
);
