//! Remembered tool approvals per caller, shared by every gateway instance that opens the
//! same vault.

use mcp_key::{Fingerprint, McpServerKey};

use super::{CredentialVault, VaultError, check_caller, check_tool, now_ms, on_pool, row_key};

/// A caller's remembered approval of one tool.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RememberedApproval {
    /// The fingerprint of the tool's definition when it was approved; `None` when it was
    /// approved before the definition was known.
    pub definition: Option<Fingerprint>,
    /// When (unix milliseconds).
    pub approved_at_ms: u64,
}

impl RememberedApproval {
    /// Whether this approval covers the tool as defined now (`now`, its fingerprint if
    /// known): yes when it was approved without a definition, or for this very one.
    ///
    /// ```
    /// use mcp_auth::RememberedApproval;
    /// use mcp_key::Fingerprint;
    ///
    /// let v1 = Fingerprint::builder("tool").str("description", "v1").finish();
    /// let v2 = Fingerprint::builder("tool").str("description", "v2").finish();
    /// let approval = RememberedApproval::new(Some(v1), 0);
    /// assert!(approval.covers(Some(&v1)));
    /// assert!(!approval.covers(Some(&v2)));
    /// assert!(!approval.covers(None));
    /// assert!(RememberedApproval::new(None, 0).covers(Some(&v2)));
    /// ```
    pub fn covers(&self, now: Option<&Fingerprint>) -> bool {
        match &self.definition {
            None => true,
            Some(approved) => now == Some(approved),
        }
    }

    /// An approval of the definition `definition`, made at `approved_at_ms`.
    pub fn new(definition: Option<Fingerprint>, approved_at_ms: u64) -> Self {
        Self {
            definition,
            approved_at_ms,
        }
    }
}

impl CredentialVault {
    /// Remember that `caller` approved `tool` of `server`, for the definition whose
    /// fingerprint is `definition` (replacing an earlier approval of that tool).
    ///
    /// # Errors
    /// [`VaultError::Invalid`] for an unusable caller or an empty tool name;
    /// [`VaultError::Unreachable`] or [`VaultError::Database`] when the write fails.
    pub async fn remember_approval(
        &self,
        caller: &str,
        server: &McpServerKey,
        tool: &str,
        definition: Option<&Fingerprint>,
    ) -> Result<(), VaultError> {
        check_caller(caller)?;
        check_tool(tool, "an approval")?;
        let row = row_key(caller, server);
        let definition = definition.map(Fingerprint::to_hex);
        const SQL: &str = "INSERT INTO mcp_vault_approvals \
             (caller, server, environment, tool, definition, approved_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (caller, server, environment, tool) DO UPDATE SET \
             definition = excluded.definition, approved_at_ms = excluded.approved_at_ms";
        on_pool!(self, pool => sqlx::query(SQL)
            .bind(row.caller)
            .bind(row.server)
            .bind(row.environment)
            .bind(tool)
            .bind(&definition)
            .bind(now_ms())
            .execute(pool)
            .await
            .map_err(|e| self.db_error("remembering an approval", e))
            .map(|_| ()))
    }

    /// `caller`'s remembered approval of `tool` of `server`, if any (check it with
    /// [`RememberedApproval::covers`]). Never another caller's.
    ///
    /// # Errors
    /// [`VaultError::Corrupt`] for a stored fingerprint that is not one;
    /// [`VaultError::Unreachable`] or [`VaultError::Database`] when the read fails.
    pub async fn remembered_approval(
        &self,
        caller: &str,
        server: &McpServerKey,
        tool: &str,
    ) -> Result<Option<RememberedApproval>, VaultError> {
        check_caller(caller)?;
        check_tool(tool, "an approval")?;
        let row = row_key(caller, server);
        const SQL: &str = "SELECT definition, approved_at_ms FROM mcp_vault_approvals \
             WHERE caller = $1 AND server = $2 AND environment = $3 AND tool = $4";
        let found: Option<(Option<String>, i64)> = on_pool!(self, pool => sqlx::query_as(SQL)
            .bind(row.caller)
            .bind(row.server)
            .bind(row.environment)
            .bind(tool)
            .fetch_optional(pool)
            .await
            .map_err(|e| self.db_error("reading an approval", e))?);
        found
            .map(|(definition, at)| {
                let definition = definition
                    .map(|hex| {
                        Fingerprint::from_hex(&hex).ok_or_else(|| {
                            row.corrupt(format!(
                                "the approval of tool `{tool}` holds no valid fingerprint"
                            ))
                        })
                    })
                    .transpose()?;
                Ok(RememberedApproval {
                    definition,
                    approved_at_ms: u64::try_from(at).unwrap_or_default(),
                })
            })
            .transpose()
    }

    /// Forget every approval `caller` gave (with an administrator's revocation, or when
    /// the caller asks). Returns how many went.
    ///
    /// # Errors
    /// [`VaultError::Unreachable`] or [`VaultError::Database`] when the write fails.
    pub async fn forget_approvals(&self, caller: &str) -> Result<u64, VaultError> {
        check_caller(caller)?;
        const SQL: &str = "DELETE FROM mcp_vault_approvals WHERE caller = $1";
        Ok(on_pool!(self, pool => sqlx::query(SQL)
            .bind(caller)
            .execute(pool)
            .await
            .map_err(|e| self.db_error("forgetting a caller's approvals", e))?
            .rows_affected()))
    }
}
