-- Remembered tool approvals per caller (mcp-auth `CredentialVault::remember_approval`),
-- so any gateway instance answers any caller. `definition` is the hex fingerprint of the
-- tool's definition when approved (NULL: approved before it was known); a tool whose
-- definition changed is asked about again. No secret here.
CREATE TABLE mcp_vault_approvals (
    caller TEXT NOT NULL,
    server TEXT NOT NULL,
    environment TEXT NOT NULL,
    tool TEXT NOT NULL,
    definition TEXT,
    approved_at_ms BIGINT NOT NULL,
    PRIMARY KEY (caller, server, environment, tool)
);
