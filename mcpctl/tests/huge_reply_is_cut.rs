//! A reply built to cost memory is cut before it is parsed: a server that answers
//! `tools/list` with one 7 MB line of 3,500,000 numbers (under the 8 MiB line limit; the
//! listing's byte budget applies only once a page is parsed) has that line cut at
//! 1,000,000 values, the server fails as a protocol violation naming why, and mcpctl's
//! peak memory stays small (parsed whole, such a line takes it to several hundred MB).
//!
//! The server is a few lines of Python speaking MCP 2025-11-25 over stdio, so that the
//! test's own memory is not a fake server's.

#![allow(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test reads /proc like a person would"
)]

mod support;

use std::io::Read;
use std::time::{Duration, Instant};

use support::Workdir;

const SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "amplifier", "version": "1"}}
        reply = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
    elif method == "tools/list":
        numbers = "0," * 3_500_000 + "0"
        reply = ('{"jsonrpc":"2.0","id":' + json.dumps(message["id"]) +
                 ',"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":'
                 '{"x":{"enum":[' + numbers + ']}}}}]}}')
    else:
        reply = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}})
    sys.stdout.write(reply + "\n")
    sys.stdout.flush()
"#;

/// The peak resident memory (VmHWM) of `pid` so far, in KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(target_os = "linux")]
#[test]
fn a_reply_of_millions_of_values_is_cut_before_it_costs_memory() {
    let wd = Workdir::new();
    wd.write("amplifier.py", SERVER);
    let config = wd.write(
        "mcp.toml",
        "[mcp_servers.amplifier]\ncommand = \"python3\"\nargs = [\"amplifier.py\"]\nprotocol = \"2025-11-25\"\nstartup_timeout_sec = 60\n",
    );
    let mut child = wd.spawn(&["--config", config.to_str().unwrap(), "status"]);
    let pid = child.id();
    let mut peak = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(kib) = peak_kib(pid) {
            peak = peak.max(kib);
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "mcpctl status did not end");
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let text = format!("{stdout}{stderr}");
    eprintln!("mcpctl peak: {} MiB", peak / 1024);
    assert!(
        text.contains("more than 1000000 JSON values"),
        "the failure names why: {text}"
    );
    // Peak measured while it ran (sampled every few ms; the cut happens mid-read, long
    // before the end). Before the cut it was several hundred MB.
    assert!(peak > 0, "no memory reading of mcpctl");
    assert!(
        peak < 128 * 1024,
        "mcpctl peaked at {} MiB reading one hostile reply",
        peak / 1024
    );
    wd.assert_no_server_left();
}
