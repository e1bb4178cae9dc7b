//! The status page as HTML: every value of a [`Snapshot`], server-supplied text escaped.

use super::{ServerRow, Snapshot};

/// One line of server-supplied text for the page: control characters and escape
/// sequences shown as text, then HTML-escaped.
fn text(s: &str) -> String {
    escape_html(&crate::term::render::terminal_safe(s))
}

/// [`text`] that keeps newlines and tabs (stderr).
fn block(s: &str) -> String {
    escape_html(&crate::term::render::terminal_safe_text(s))
}

fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1f24;background:#fff}\
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.5em 0 .4em}\
.meta{color:#57606a;margin:0}table{border-collapse:collapse}\
th,td{border-bottom:1px solid #d0d7de;padding:.3em .7em;text-align:left;vertical-align:top}\
thead th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}\
td.n,td.era{white-space:nowrap}\
.state{font-weight:600}.ready .state{color:#1a7f37}.failed .state{color:#cf222e}\
.starting .state,.deferred .state,.idle .state{color:#9a6700}\
.info{color:#57606a;font-size:.9em}pre{margin:.2em 0;white-space:pre-wrap;word-break:break-all}\
tr.detail td{border-top:0;background:#fff8f8}code{font-size:.95em}";

/// The page: two tables (servers, clients), every value from `s`.
pub(super) fn html(s: &Snapshot) -> String {
    let mut out = String::with_capacity(4096);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width\">\n");
    out.push_str("<title>mcpctl serve: status</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<h1>mcpctl serve</h1>\n");
    out.push_str(&format!(
        "<p class=\"meta\">mcpctl {} · up {} · {} · latency over the last {} min (at most {} calls per server) · <a href=\"status.json\">status.json</a></p>\n",
        text(s.mcpctl),
        uptime(s.uptime_secs),
        crate::term::progress::plural(s.clients.connected, "client"),
        s.window.secs / 60,
        s.window.max_calls,
    ));
    out.push_str(&format!(
        "<h2>Servers ({})</h2>\n<table id=\"servers\">\n<thead><tr><th>Server</th><th>Transport</th><th>State</th><th>Era</th><th>PID</th><th>Restarts</th><th>Tools</th><th>Calls</th><th>Errors</th><th>Calls (window)</th><th>Errors (window)</th><th>p50</th><th>p99</th></tr></thead>\n<tbody>\n",
        s.servers.len()
    ));
    for row in &s.servers {
        server_rows(&mut out, row);
    }
    if s.servers.is_empty() {
        out.push_str("<tr><td colspan=\"13\">no enabled servers</td></tr>\n");
    }
    out.push_str("</tbody>\n</table>\n<h2>Clients</h2>\n<table id=\"clients\">\n<thead><tr><th>Principal</th><th>Clients</th><th>Parked calls</th><th>Tasks</th></tr></thead>\n<tbody>\n");
    for p in &s.clients.by_principal {
        out.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
            text(&p.principal),
            p.clients,
            p.parked,
            p.tasks
        ));
    }
    out.push_str(&format!(
        "</tbody>\n</table>\n<p class=\"meta\">2026-era calls in flight (no session): {}</p>\n</body>\n</html>\n",
        s.clients.stateless_calls_in_flight
    ));
    out
}

fn server_rows(out: &mut String, row: &ServerRow) {
    let dash = || "–".to_owned();
    let num = |n: Option<String>| n.unwrap_or_else(dash);
    let ms = |v: Option<f64>| v.map_or_else(dash, |v| format!("{v:.1} ms"));
    let mut state = text(row.state);
    if let Some(reason) = &row.reason_text {
        state.push_str(&format!("<br><span class=\"info\">{}</span>", text(reason)));
    }
    if let Some(c) = &row.crash_loop {
        state.push_str(&format!(
            " <span class=\"info\">(crash loop: {} in a row, next start in {} s)</span>",
            c.crashes,
            c.retry_in_ms.div_ceil(1000)
        ));
    }
    let mut name = format!("<code>{}</code>", text(&row.server));
    if let Some(info) = &row.server_info {
        let title = info
            .title
            .as_deref()
            .map(|t| format!(" “{}”", text(t)))
            .unwrap_or_default();
        name.push_str(&format!(
            "<br><span class=\"info\">reports {} {}{}</span>",
            text(&info.name),
            text(&info.version),
            title
        ));
    }
    out.push_str(&format!(
        "<tr class=\"{}\" id=\"server-{}\"><td>{name}</td><td>{}</td><td class=\"state\">{state}</td><td class=\"era\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
        text(row.state),
        text(&row.server),
        text(row.transport),
        row.era.map_or_else(dash, text),
        num(row.pid.map(|p| p.to_string())),
        row.restarts,
        num(row.tools.map(|t| t.to_string())),
        row.calls.total,
        row.calls.errors,
        row.calls.window.calls,
        row.calls.window.errors,
        ms(row.calls.window.p50_ms),
        ms(row.calls.window.p99_ms),
    ));
    let mut detail = String::new();
    if let Some(error) = &row.error {
        detail.push_str(&format!("<pre class=\"error\">{}</pre>", block(error)));
    }
    if let Some(tail) = &row.stderr_tail {
        detail.push_str(&format!(
            "<pre class=\"stderr\">stderr: {}</pre>",
            block(tail)
        ));
    }
    for warning in &row.warnings {
        detail.push_str(&format!(
            "<pre class=\"warning\">warning: {}</pre>",
            text(warning)
        ));
    }
    if !detail.is_empty() {
        out.push_str(&format!(
            "<tr class=\"detail\"><td colspan=\"13\">{detail}</td></tr>\n"
        ));
    }
}

/// `42 s`, `3 min 2 s`, `2 h 5 min`.
fn uptime(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min {} s", secs / 60, secs % 60),
        _ => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::serve::status::tests::hostile_snapshot;

    #[test]
    fn server_text_is_shown_as_text() {
        let hostile = "<script>alert('x')</script>\u{1b}[31mred\u{1b}[0m & \"q\"\u{202e}";
        assert_eq!(
            text(hostile),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;\\e[31mred\\e[0m &amp; &quot;q&quot;\\u{202e}"
        );
        assert_eq!(block("a\n\u{7}b"), "a\n\\x07b");
    }

    #[test]
    fn the_page_has_no_markup_and_no_control_character_from_servers() {
        let page = html(&hostile_snapshot());
        for raw in ["<script", "<img", "<b>", "<i>", "\u{1b}", "\u{7}"] {
            assert!(!page.contains(raw), "{raw:?} in the page:\n{page}");
        }
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;\\e]0;title\\x07"));
        assert!(page.contains("<span class=\"info\">exited with status 3</span>"));
        assert!(page.contains("up 1 h 2 min"));
    }
}
