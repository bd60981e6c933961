-- Which gateway process runs a request claimed under an Idempotency-Key (services/gateway/holder.py). Each
-- process holds a session lock named after itself while it serves; a claim still in progress whose holder's
-- lock is free (the process was killed, or lost the database mid-request) is taken over by the next retry
-- of the same request instead of answering 409 "still in progress" until the key expires. Claims made
-- before this column are treated as held by nobody.
ALTER TABLE gw_idempotency ADD COLUMN holder text;
