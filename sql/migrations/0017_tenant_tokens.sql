-- Tokens carry their tenant (issue 23): access and refresh tokens and stream tickets are
-- now minted as lr_at_<tenant id>_<43 base64url>, lr_rt_…, lr_st_…, and the service finds
-- them by (tenant_id, token_hash), the primary key, as landmark_app with the claimed
-- tenant set for row-level security (the grants of 0002 and 0012 cover it). Citus cannot
-- distribute a table by tenant_id while a unique index lacks tenant_id, so the unique
-- indexes on the hash alone become plain ones. Nothing relied on their uniqueness: no
-- ON CONFLICT names them, and the SHA-256 of 256 random bits does not repeat.

-- These serve only the lookups of tokens and tickets in the legacy form (43 characters
-- after the prefix), by authenticate_access_token and redeem_stream_ticket, which stay as
-- they are. A later migration drops both indexes and both functions once a refresh
-- token's lifetime (30 days by default) has passed since the last replica of the earlier
-- release stopped (docs/operations.md, Citus).
CREATE INDEX session_tokens_legacy_hash ON session_tokens (token_hash);
DROP INDEX session_tokens_hash;
CREATE INDEX stream_tickets_legacy_hash ON stream_tickets (ticket_hash);
DROP INDEX stream_tickets_hash;
