-- Sign-ins in progress (mcp-auth `CredentialVault::start_sign_in`): one row per sign-in
-- whose start page was opened, until its callback takes it (`finished_at_ms` set) or it
-- expires, so the callback may reach any gateway instance and is taken once. `ciphertext`
-- is what the callback needs (a PKCE verifier, the registered client), sealed like a
-- credential row under the key `key_id` with `nonce`; the associated data binds `id`.
CREATE TABLE mcp_vault_sign_ins (
    id TEXT NOT NULL PRIMARY KEY,
    expires_at BIGINT NOT NULL,
    key_id TEXT NOT NULL,
    nonce BYTEA NOT NULL,
    ciphertext BYTEA NOT NULL,
    finished_at_ms BIGINT
);
CREATE INDEX mcp_vault_sign_ins_expires_at ON mcp_vault_sign_ins (expires_at);
