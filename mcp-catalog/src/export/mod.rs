//! Writing configurations back out: [`export_toml`](crate::export_toml) turns loaded files
//! (of any [`ConfigFormat`](crate::ConfigFormat)) into one `mcp.toml`.
//!
//! Reads only the model (`model`) and the root's shared modules: never `formats`,
//! `resolve` or `hosts` outside its tests, and nothing in the crate imports `export`.

pub(crate) mod toml_write;
