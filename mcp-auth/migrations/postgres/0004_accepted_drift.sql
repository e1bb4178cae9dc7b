-- Accepted tool changes (drift), shared by every gateway instance on the store
-- (mcp-auth `CredentialVault::accept_drift`): an instance that holds back the same change
-- finds it accepted here and accepts it locally without asking. `definition` is the hex
-- fingerprint of the tool's definition that was accepted (NULL: accepted as removed).
-- No secret here.
CREATE TABLE mcp_vault_accepted_drift (
    server TEXT NOT NULL,
    environment TEXT NOT NULL,
    tool TEXT NOT NULL,
    definition TEXT,
    accepted_by TEXT NOT NULL,
    accepted_at_ms BIGINT NOT NULL,
    PRIMARY KEY (server, environment, tool)
);
