//! [`free_loopback_port`]: a loopback TCP port for a server another process will bind.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

/// The lowest port handed out: above the well-known and most registered services' ports.
const LOWEST: u16 = 20_000;

/// Where the kernel's ephemeral ports start when `/proc` does not say (Linux's default).
const EPHEMERAL_START: u16 = 32_768;

/// Picks made by this process so far: the next pick starts past them.
static PICKS: AtomicU32 = AtomicU32::new(0);

/// A port free on 127.0.0.1 now, for a server that a test starts in another process
/// (`mcpctl serve --http`, a login callback, nginx, sshd, PostgreSQL), which must bind it
/// itself.
///
/// Binding port 0 and closing the listener is not enough: that port comes from the kernel's
/// ephemeral range, where every outgoing connection of every test running beside this one
/// also takes its local port, so the server sometimes found its port taken ("Address
/// already in use"). This port lies below that range (`/proc/sys/net/ipv4/
/// ip_local_port_range`), which the kernel never hands out on its own; it starts at a
/// place that differs per process and per pick, so tests in parallel processes rarely try
/// the same one, and it is checked free (bound and closed) before it is returned.
///
/// ```
/// let port = mcp_testkit::free_loopback_port().unwrap();
/// assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());
/// ```
///
/// # Errors
/// No port below the ephemeral range could be bound.
pub fn free_loopback_port() -> std::io::Result<u16> {
    let pick = PICKS.fetch_add(1, Ordering::Relaxed);
    let seed = std::process::id()
        .wrapping_mul(2_654_435_761)
        .wrapping_add(pick.wrapping_mul(7_919))
        .wrapping_add(subsec_nanos());
    pick_from(seed)
}

/// The first port free to bind, trying from a place that `seed` decides.
fn pick_from(seed: u32) -> std::io::Result<u16> {
    let end = ephemeral_start().max(LOWEST + 1_000);
    let span = u32::from(end - LOWEST);
    let mut last = None;
    for step in 0..span.min(512) {
        let offset = (seed.wrapping_add(step.wrapping_mul(97))) % span;
        let port = LOWEST + u16::try_from(offset).unwrap_or(0);
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(listener) => {
                drop(listener);
                return Ok(port);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no loopback port to try")))
}

fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(EPHEMERAL_START)
}

fn subsec_nanos() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_below_the_ephemeral_range_free_and_spread() {
        let ports: Vec<u16> = (0..20).map(|_| free_loopback_port().unwrap()).collect();
        let start = ephemeral_start();
        for &port in &ports {
            assert!(
                (LOWEST..start.max(LOWEST + 1_000)).contains(&port),
                "{port}"
            );
        }
        let mut distinct = ports.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() >= 18, "{ports:?}");
    }

    #[test]
    fn a_taken_port_is_skipped() {
        let port = pick_from(12_345).unwrap();
        let held = TcpListener::bind(("127.0.0.1", port)).unwrap();
        let next = pick_from(12_345).unwrap();
        assert_ne!(next, port);
        drop(held);
        assert_eq!(pick_from(12_345).unwrap(), port);
    }
}
