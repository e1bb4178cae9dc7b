//! Where a stdio server runs, beyond the wrapper environments of `mcp-client`: ssh hosts
//! with a shared control master ([`ssh_environment`], [`ssh_master`]) and the reading of
//! ssh's failures ([`ssh_failure`]). Never imports the set or its policy.

pub(crate) mod ssh_environment;
pub(crate) mod ssh_failure;
pub(crate) mod ssh_master;
