//! The fake server's event cursors: `pos-N` is the position after the N-th event. A leaf,
//! so the event log and the webhook deliveries both name cursors without importing each
//! other.

/// The prefix of a cursor.
pub(crate) const CURSOR_PREFIX: &str = "pos-";

/// The cursor of the position after `seq` events.
pub(crate) fn cursor(seq: u64) -> String {
    format!("{CURSOR_PREFIX}{seq}")
}
