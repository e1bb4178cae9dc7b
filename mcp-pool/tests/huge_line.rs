//! A 100 MiB stdout line is refused without the host's memory following it.
//! Alone in its test binary so the process's peak memory is this test's.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use common::*;
use mcp_pool::{DEFAULT_MAX_LINE_BYTES, launch};
use rmcp::ServiceExt;

/// A field of /proc/self/status, in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_100_mib_stdout_line_is_rejected_with_bounded_memory() {
    const HUNDRED_MIB: usize = 100 * 1024 * 1024;
    // Start the measurement from the current resident size: writing 5 to
    // clear_refs resets the peak (VmHWM) to it.
    // The baseline is the peak right after the reset (RSS may move between two reads while
    // the runtime's threads start).
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status_kib("VmHWM:");

    let mut process = launch(fake(&["--huge-line", &HUNDRED_MIB.to_string()]))
        .await
        .unwrap();
    let transport = process.take_transport().unwrap();
    let connected = tokio::time::timeout(GONE * 2, client_config().serve(transport))
        .await
        .expect("the client must not hang on an endless line");
    assert!(
        connected.is_err(),
        "initialize cannot succeed behind the huge line"
    );
    assert_eq!(
        process.stdout_fault(),
        Some(format!("stdout line longer than {DEFAULT_MAX_LINE_BYTES} bytes").as_str())
    );

    let peak = status_kib("VmHWM:");
    let growth_mib = (peak.saturating_sub(before)) / 1024;
    let limit_mib = (DEFAULT_MAX_LINE_BYTES / (1024 * 1024)) as u64;
    assert!(
        growth_mib <= 4 * limit_mib,
        "memory grew by {growth_mib} MiB for a {limit_mib} MiB line limit"
    );

    process.shutdown().await;
    assert_all_gone(&[process.pid()]).await;
}
