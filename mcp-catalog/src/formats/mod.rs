//! Reading configuration text into the model: this crate's TOML, the JSON files of other
//! clients (`.mcp.json`, VS Code, Cursor, Claude Desktop, Gemini CLI, Windsurf, Zed) and
//! Goose's YAML, each with located, actionable diagnostics. Owns format detection
//! ([`ConfigFormat::detect`](crate::ConfigFormat::detect)), the dispatch from a
//! [`ConfigFormat`](crate::ConfigFormat) to its parser (`dispatch.rs`, the
//! `Config::from_*` constructors), variable expansion, VS Code's inputs and
//! [`load_file`](crate::load_file).
//!
//! Imports `model` and the crate root's shared modules only: never `resolve`, `hosts` or
//! `export` (they call in here, not the other way round).

pub(crate) mod client_env;
pub(crate) mod collect;
pub(crate) mod detect;
pub(crate) mod dispatch;
pub(crate) mod expand;
pub(crate) mod goose;
pub(crate) mod inputs;
pub(crate) mod json_locate;
pub(crate) mod json_parse;
pub(crate) mod jsonc;
pub(crate) mod load;
pub(crate) mod toml_defaults;
pub(crate) mod toml_gateway;
pub(crate) mod toml_identity;
pub(crate) mod toml_parse;
pub(crate) mod toml_server;
pub(crate) mod toml_ssh;
pub(crate) mod toml_values;
pub(crate) mod toml_workload;
pub(crate) mod yaml_tree;
