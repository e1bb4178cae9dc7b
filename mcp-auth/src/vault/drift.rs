//! Accepted tool changes (drift), shared by every gateway instance that opens the same
//! vault: a change accepted on one instance is accepted on the others when they see it.

use mcp_key::{Fingerprint, McpServerKey};

use super::{CredentialVault, VaultError, check_caller, check_tool, now_ms, on_pool, row_key};

/// An accepted change of one tool: the definition it was accepted for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AcceptedDrift {
    /// The fingerprint of the tool's definition that was accepted; `None` when its
    /// removal was accepted.
    pub definition: Option<Fingerprint>,
    /// Who accepted it (the caller's id, as the gateway names callers).
    pub accepted_by: String,
    /// When (unix milliseconds).
    pub accepted_at_ms: u64,
}

impl AcceptedDrift {
    /// Whether this acceptance is of the definition `seen` (its fingerprint; `None`: the
    /// tool is gone): only that very definition, never a later change.
    ///
    /// ```
    /// use mcp_auth::AcceptedDrift;
    /// use mcp_key::Fingerprint;
    ///
    /// let v2 = Fingerprint::builder("tool").str("description", "v2").finish();
    /// let v3 = Fingerprint::builder("tool").str("description", "v3").finish();
    /// let accepted = AcceptedDrift::new(Some(v2), "sub:alice", 0);
    /// assert!(accepted.covers(Some(&v2)));
    /// assert!(!accepted.covers(Some(&v3)));
    /// assert!(!accepted.covers(None));
    /// assert!(AcceptedDrift::new(None, "sub:alice", 0).covers(None));
    /// ```
    pub fn covers(&self, seen: Option<&Fingerprint>) -> bool {
        self.definition.as_ref() == seen
    }

    /// The acceptance of `definition` by `accepted_by` at `accepted_at_ms`.
    pub fn new(
        definition: Option<Fingerprint>,
        accepted_by: impl Into<String>,
        accepted_at_ms: u64,
    ) -> Self {
        Self {
            definition,
            accepted_by: accepted_by.into(),
            accepted_at_ms,
        }
    }
}

impl CredentialVault {
    /// Record that `accepted_by` accepted the changed definition of `tool` of `server`
    /// whose fingerprint is `definition` (`None`: its removal), for every instance sharing
    /// the vault; replaces an earlier acceptance of that tool.
    ///
    /// # Errors
    /// [`VaultError::Invalid`] for an unusable caller or an empty tool name;
    /// [`VaultError::Unreachable`] or [`VaultError::Database`] when the write fails.
    pub async fn accept_drift(
        &self,
        server: &McpServerKey,
        tool: &str,
        definition: Option<&Fingerprint>,
        accepted_by: &str,
    ) -> Result<(), VaultError> {
        check_caller(accepted_by)?;
        check_tool(tool, "an accepted tool change")?;
        let row = row_key(accepted_by, server);
        let definition = definition.map(Fingerprint::to_hex);
        const SQL: &str = "INSERT INTO mcp_vault_accepted_drift \
             (server, environment, tool, definition, accepted_by, accepted_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (server, environment, tool) DO UPDATE SET \
             definition = excluded.definition, accepted_by = excluded.accepted_by, \
             accepted_at_ms = excluded.accepted_at_ms";
        on_pool!(self, pool => sqlx::query(SQL)
            .bind(row.server)
            .bind(row.environment)
            .bind(tool)
            .bind(&definition)
            .bind(accepted_by)
            .bind(now_ms())
            .execute(pool)
            .await
            .map_err(|e| self.db_error("recording an accepted tool change", e))
            .map(|_| ()))
    }

    /// The last accepted change of `tool` of `server`, if any (check it with
    /// [`AcceptedDrift::covers`] against the definition seen now). A stored fingerprint
    /// that is not one counts as nothing accepted: the change is asked about again.
    ///
    /// # Errors
    /// [`VaultError::Invalid`] for an empty tool name; [`VaultError::Unreachable`] or
    /// [`VaultError::Database`] when the read fails.
    pub async fn accepted_drift(
        &self,
        server: &McpServerKey,
        tool: &str,
    ) -> Result<Option<AcceptedDrift>, VaultError> {
        check_tool(tool, "an accepted tool change")?;
        let row = row_key("", server);
        const SQL: &str = "SELECT definition, accepted_by, accepted_at_ms \
             FROM mcp_vault_accepted_drift \
             WHERE server = $1 AND environment = $2 AND tool = $3";
        let found: Option<(Option<String>, String, i64)> = on_pool!(self, pool => sqlx::query_as(SQL)
                .bind(row.server)
                .bind(row.environment)
                .bind(tool)
                .fetch_optional(pool)
                .await
                .map_err(|e| self.db_error("reading an accepted tool change", e))?);
        Ok(found.and_then(|(definition, accepted_by, at)| {
            let definition = match definition {
                None => None,
                Some(hex) => Some(Fingerprint::from_hex(&hex)?),
            };
            Some(AcceptedDrift {
                definition,
                accepted_by,
                accepted_at_ms: u64::try_from(at).unwrap_or_default(),
            })
        }))
    }
}
