//! One row of the table, and its Markdown and JSON forms.

use serde::Serialize;

/// What a figure counts, for formatting.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Unit {
    /// A duration in seconds.
    Seconds,
    /// A rate: calls per second.
    CallsPerSecond,
    /// Bytes.
    Bytes,
    /// Processes.
    Processes,
}

impl Unit {
    fn format(self, value: f64) -> String {
        match self {
            Unit::Seconds => format_duration(value),
            Unit::CallsPerSecond => format!("{value:.0} calls/s"),
            Unit::Bytes => format!("{:.1} KiB", value / 1024.0),
            Unit::Processes if value == 1.0 => "1 process".to_owned(),
            Unit::Processes => format!("{value:.0} processes"),
        }
    }
}

fn format_duration(secs: f64) -> String {
    if secs >= 1.0 {
        format!("{secs:.2} s")
    } else if secs >= 1e-3 {
        format!("{:.2} ms", secs * 1e3)
    } else if secs >= 1e-6 {
        format!("{:.1} µs", secs * 1e6)
    } else {
        format!("{:.0} ns", secs * 1e9)
    }
}

/// One measured (or pending) row.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    /// quality.md's row and the figure, e.g. "call overhead p50".
    pub(crate) row: String,
    /// The measured value, `None` when the row is pending.
    pub(crate) value: Option<f64>,
    /// What the value counts.
    pub(crate) unit: Unit,
    /// The baseline from the same run, if the row has one.
    pub(crate) baseline: Option<f64>,
    /// What the baseline is ("bare rmcp client").
    pub(crate) baseline_label: String,
    /// `value / baseline`.
    pub(crate) ratio: Option<f64>,
    /// The target, as quality.md words it.
    pub(crate) target: String,
    /// Whether the target is met; `None` when pending.
    pub(crate) meets: Option<bool>,
    /// A note for pending rows, or how the row was measured.
    pub(crate) note: String,
}

impl Row {
    /// A row measured against a baseline; `meets` decides from (value, ratio).
    pub(crate) fn versus(
        row: impl Into<String>,
        unit: Unit,
        value: f64,
        baseline: f64,
        baseline_label: impl Into<String>,
        target: impl Into<String>,
        meets: impl FnOnce(f64, f64) -> bool,
    ) -> Self {
        let ratio = if baseline > 0.0 {
            value / baseline
        } else {
            f64::NAN
        };
        Self {
            row: row.into(),
            value: Some(value),
            unit,
            baseline: Some(baseline),
            baseline_label: baseline_label.into(),
            ratio: Some(ratio),
            target: target.into(),
            meets: Some(meets(value, ratio)),
            note: String::new(),
        }
    }

    /// A row measured against a baseline with no target of its own (reported for the
    /// reader; another row holds the target).
    pub(crate) fn reported(
        row: impl Into<String>,
        unit: Unit,
        value: f64,
        baseline: f64,
        baseline_label: impl Into<String>,
    ) -> Self {
        let mut row = Self::versus(row, unit, value, baseline, baseline_label, "—", |_, _| {
            true
        });
        row.meets = None;
        row
    }

    /// A row with an absolute target and no baseline.
    pub(crate) fn absolute(
        row: impl Into<String>,
        unit: Unit,
        value: f64,
        target: impl Into<String>,
        meets: bool,
    ) -> Self {
        Self {
            row: row.into(),
            value: Some(value),
            unit,
            baseline: None,
            baseline_label: String::new(),
            ratio: None,
            target: target.into(),
            meets: Some(meets),
            note: String::new(),
        }
    }

    /// A row this command does not measure, with the reason.
    pub(crate) fn pending(row: impl Into<String>, target: impl Into<String>, note: &str) -> Self {
        Self {
            row: row.into(),
            value: None,
            unit: Unit::Seconds,
            baseline: None,
            baseline_label: String::new(),
            ratio: None,
            target: target.into(),
            meets: None,
            note: note.to_owned(),
        }
    }

    /// A row whose measurement failed: it stays in the table, marked as not met.
    pub(crate) fn failed(row: &str, error: &str) -> Self {
        let mut failed = Self::pending(row, "—", &format!("FAILED: {error}"));
        failed.meets = Some(false);
        failed
    }

    /// Adds a note on how the row was measured.
    pub(crate) fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }
}

/// The rows as one Markdown table.
pub(crate) fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| row | measured | baseline (same run) | ratio | target | meets |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in rows {
        let measured = match r.value {
            Some(v) => r.unit.format(v),
            None => cell(&r.note),
        };
        let baseline = match r.baseline {
            Some(b) => format!("{}: {}", r.baseline_label, r.unit.format(b)),
            None => "—".to_owned(),
        };
        let ratio = match r.ratio {
            Some(x) if x.is_finite() => format!("{x:.3}×"),
            _ => "—".to_owned(),
        };
        let meets = match r.meets {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        };
        out.push_str(&format!(
            "| {} | {measured} | {baseline} | {ratio} | {} | {meets} |\n",
            r.row, r.target
        ));
    }
    out
}

/// `text` made safe for one Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(format_duration(2.5), "2.50 s");
        assert_eq!(format_duration(0.0123), "12.30 ms");
        assert_eq!(format_duration(0.000_101), "101.0 µs");
        assert_eq!(format_duration(0.000_000_184), "184 ns");
    }

    #[test]
    fn a_failed_row_stays_in_the_table() {
        let md = markdown(&[Row::failed("memory", "probe failed: a | b\nc")]);
        assert!(
            md.contains("| memory | FAILED: probe failed: a \\| b c | — | — | — | **no** |"),
            "{md}"
        );
    }

    #[test]
    fn a_row_without_baseline_prints_a_dash() {
        let rows = [Row::absolute(
            "naming",
            Unit::Seconds,
            0.002,
            "≤ 10 ms",
            true,
        )];
        let md = markdown(&rows);
        assert!(
            md.contains("| naming | 2.00 ms | — | — | ≤ 10 ms | yes |"),
            "{md}"
        );
    }
}
