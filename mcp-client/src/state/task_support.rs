//! Which tools of a 2025-era server must be called as tasks, read off the raw listings.

use serde_json::Value;

/// The tools of a 2025-era server that must be called as tasks (`execution.taskSupport:
/// "required"`), read off the raw `tools/list` replies because rmcp's `Tool` does not keep
/// `execution`. Replies over streamable HTTP that come as one JSON body (not an event
/// stream) are not seen; the "method not found" retry covers those.
#[derive(Debug, Default)]
pub(crate) struct TaskSupport {
    required: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl TaskSupport {
    /// Whether `tool` must be called as a task.
    pub(crate) fn requires(&self, tool: &str) -> bool {
        self.required
            .lock()
            .is_ok_and(|required| required.contains(tool))
    }

    /// Reads one raw message: a page of `tools/list` that says `taskSupport` updates the
    /// tools it lists. Anything else (most messages) is passed over without parsing.
    pub(crate) fn note(&self, message: &[u8]) {
        const MARK: &[u8] = b"\"taskSupport\"";
        // Checked on every message read, with `memchr`'s substring search (vectorized),
        // its searcher built once.
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new(MARK));
        if FINDER.find(message).is_none() {
            return;
        }
        let Ok(value) = serde_json::from_slice::<Value>(message) else {
            return;
        };
        let Some(tools) = value.pointer("/result/tools").and_then(Value::as_array) else {
            return;
        };
        let Ok(mut required) = self.required.lock() else {
            return;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let support = tool
                .pointer("/execution/taskSupport")
                .and_then(Value::as_str);
            if support == Some("required") {
                required.insert(name.to_owned());
            } else {
                required.remove(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_that_require_a_task_are_read_off_the_raw_listing() {
        let support = TaskSupport::default();
        let page = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[
            {"name":"research","inputSchema":{},"execution":{"taskSupport":"required"}},
            {"name":"maybe","inputSchema":{},"execution":{"taskSupport":"optional"}},
            {"name":"echo","inputSchema":{}}]}}"#;
        support.note(page);
        assert!(support.requires("research"));
        assert!(!support.requires("maybe") && !support.requires("echo"));
        // A later listing where the tool no longer requires one.
        support.note(
            br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"research","inputSchema":{},"execution":{"taskSupport":"forbidden"}}]}}"#,
        );
        assert!(!support.requires("research"));
        // Not a listing, or not JSON: nothing changes, nothing fails.
        support.note(br#"{"taskSupport" oops"#);
        support.note(br#"{"jsonrpc":"2.0","method":"x","params":{"taskSupport":"required"}}"#);
    }
}
