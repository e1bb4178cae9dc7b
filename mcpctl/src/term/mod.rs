//! The terminal: how output looks and how a person is asked. Colour (`style`), the
//! escaping of server-controlled text, tables and writing to stdout and stderr (`render`),
//! live startup and call progress (`progress`), which `screen` takes off the terminal while
//! anything asks, and prompts: a server's elicitation
//! (`elicit`), whether a tool may run (`approve`) and the `${input:id}` values of VS Code files (`inputs`).
//!
//! Must never import `host`, `commands` or `serve`: it knows how to show and ask, not
//! which configuration is loaded or what a command does, so every command and the
//! gateway can use it. Nothing here decides an exit code or builds a `CliError`.

pub(crate) mod approve;
pub(crate) mod elicit;
pub(crate) mod inputs;
pub(crate) mod progress;
pub(crate) mod render;
pub(crate) mod screen;
pub(crate) mod style;
