-- The gateway's per-user upstream credentials (mcp-auth `CredentialVault`), PostgreSQL.
-- One row per (caller, server, environment); `environment` is '' for an unscoped server.
-- `ciphertext` is the credential record sealed with AES-256-GCM under the key `key_id`,
-- with `nonce` (96 bits, random per write); the associated data binds the row's key
-- (caller, server, environment) and the key id. The other columns are what a status page
-- shows and hold no secret.
CREATE TABLE mcp_vault_credentials (
    caller TEXT NOT NULL,
    server TEXT NOT NULL,
    environment TEXT NOT NULL,
    key_id TEXT NOT NULL,
    nonce BYTEA NOT NULL,
    ciphertext BYTEA NOT NULL,
    expires_at BIGINT,
    updated_at_ms BIGINT NOT NULL,
    refresh_failure TEXT,
    refresh_failed_at_ms BIGINT,
    PRIMARY KEY (caller, server, environment)
);
CREATE INDEX mcp_vault_credentials_key_id ON mcp_vault_credentials (key_id);
