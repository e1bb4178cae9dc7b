//! `mcpctl`: check and use MCP server configurations.

fn main() {}
