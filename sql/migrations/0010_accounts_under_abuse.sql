-- Accounts under abuse (issue 17): login throttling that a stranger cannot turn
-- against an account's owner.

-- ---------------------------------------------------------------------------
-- Login throttling (Sources/LandmarkRemark/Auth/LoginThrottle.swift).
--
-- login_failures now counts attempts, reserved before the password is hashed,
-- under three keys per attempt (0002's 'user:…' keys are no longer written):
--   'pair:<subject>@<address>'  one account (or unknown login) from one address
--   '<subject>'                 the account from everywhere: 'acct:<user id>',
--                               or 'login:<lower(login)>' when no account matches
--   'addr:<address>'            one address, whatever it tries
-- The account-wide key is not used from an address listed here: one that logged
-- in to that account within the last 30 days (LoginThrottle.knownAddressDays).
CREATE TABLE login_addresses (
    tenant_id bigint NOT NULL,
    user_id bigint NOT NULL,
    address text NOT NULL,
    last_login_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id, address),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
ALTER TABLE login_addresses ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON login_addresses USING (tenant_id = current_tenant_id()) WITH CHECK (tenant_id = current_tenant_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON login_addresses TO landmark_app;
