//! Output: readable text for tool results and resource contents (from their wire JSON),
//! the escaping of server-controlled text for the terminal, aligned tables, and writing to
//! stdout and stderr.

use std::io::Write;

use serde_json::Value;

/// The lines of a `tools/call` result for people: text as text, JSON pretty-printed,
/// binary content summarized with size and MIME type, then the structured content when no
/// text block already shows it.
pub(crate) fn call_result(result: &Value) -> String {
    let mut out = Vec::new();
    let mut shown_json = Vec::new();
    let blocks = result.get("content").and_then(Value::as_array);
    for block in blocks.into_iter().flatten() {
        let (text, json) = content_block(block);
        out.push(text);
        shown_json.extend(json);
    }
    if let Some(structured) = result.get("structuredContent")
        && !shown_json.contains(structured)
    {
        out.push(format!("structured content:\n{}", pretty(structured)));
    }
    if out.is_empty() {
        out.push("(no content)".to_owned());
    }
    join(out)
}

/// The lines of a `resources/read` result: text as text, blobs summarized.
pub(crate) fn resource_contents(result: &Value) -> String {
    let contents: Vec<&Value> = result
        .get("contents")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let single = contents.len() == 1;
    let mut out = Vec::new();
    for item in contents {
        let uri = str_of(item, "uri").unwrap_or("?");
        let mime = str_of(item, "mimeType");
        if let Some(text) = str_of(item, "text") {
            if !single {
                out.push(format!(
                    "--- {uri}{} ---",
                    mime.map(|m| format!(" ({m})")).unwrap_or_default()
                ));
            }
            out.push(text.trim_end_matches('\n').to_owned());
        } else if let Some(blob) = str_of(item, "blob") {
            out.push(format!(
                "[blob {uri}: {}, {}]",
                mime.unwrap_or("unknown type"),
                size(base64_len(blob))
            ));
        }
    }
    if out.is_empty() {
        out.push("(no contents)".to_owned());
    }
    join(out)
}

/// The lines joined, with server-controlled control characters escaped (only newlines and
/// tabs kept).
fn join(lines: Vec<String>) -> String {
    let mut text = terminal_safe_text(&lines.join("\n")).into_owned();
    text.push('\n');
    text
}

/// One content block as text, and the JSON value it showed (to avoid printing the same
/// structured content twice).
fn content_block(block: &Value) -> (String, Option<Value>) {
    let kind = str_of(block, "type").unwrap_or("unknown");
    match kind {
        "text" => {
            let text = str_of(block, "text").unwrap_or_default();
            match serde_json::from_str::<Value>(text) {
                Ok(json @ (Value::Object(_) | Value::Array(_))) => (pretty(&json), Some(json)),
                _ => (text.trim_end_matches('\n').to_owned(), None),
            }
        }
        "image" | "audio" => {
            let mime = str_of(block, "mimeType").unwrap_or("unknown type");
            let bytes = str_of(block, "data").map_or(0, base64_len);
            (format!("[{kind}: {mime}, {}]", size(bytes)), None)
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = str_of(resource, "uri").unwrap_or("?");
            let mime = str_of(resource, "mimeType");
            if let Some(text) = str_of(resource, "text") {
                let label = mime.map(|m| format!(" ({m})")).unwrap_or_default();
                (
                    format!("[resource {uri}{label}]\n{}", text.trim_end_matches('\n')),
                    None,
                )
            } else {
                let bytes = str_of(resource, "blob").map_or(0, base64_len);
                (
                    format!(
                        "[resource {uri}: {}, {}]",
                        mime.unwrap_or("unknown type"),
                        size(bytes)
                    ),
                    None,
                )
            }
        }
        "resource_link" => {
            let uri = str_of(block, "uri").unwrap_or("?");
            let mut parts = Vec::new();
            parts.extend(str_of(block, "name").map(str::to_owned));
            parts.extend(str_of(block, "mimeType").map(str::to_owned));
            if let Some(n) = block.get("size").and_then(Value::as_u64) {
                parts.push(size(usize::try_from(n).unwrap_or(usize::MAX)));
            }
            let detail = if parts.is_empty() {
                String::new()
            } else {
                format!(" ({})", parts.join(", "))
            };
            (format!("[resource link: {uri}{detail}]"), None)
        }
        other => (format!("[{other} content]\n{}", pretty(block)), None),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Pretty JSON (compact if pretty-printing fails, which it does not for a `Value`).
pub(crate) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// Decoded length of base64 text.
fn base64_len(data: &str) -> usize {
    let chars = data.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let padding = data
        .trim_end()
        .bytes()
        .rev()
        .take_while(|&b| b == b'=')
        .count();
    (chars / 4 * 3 + (chars % 4).saturating_sub(1)).saturating_sub(padding)
}

/// `512 bytes`, `1.5 KiB`, `2.0 MiB`.
fn size(bytes: usize) -> String {
    #[expect(
        clippy::cast_precision_loss,
        reason = "an approximate size for display"
    )]
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    }
}

/// `text` with every control character and terminal escape shown escaped (`\e`, `\x07`,
/// `\u{9b}`, `\u{202e}`), as git does: server-controlled text must not move the cursor,
/// erase lines, set the window title or reorder what a person reads. Newlines and tabs are
/// escaped too; see [`terminal_safe_text`] for multi-line text.
pub(crate) fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    escape_controls(text, false)
}

/// [`terminal_safe`] that keeps newlines and tabs (results, resource contents).
pub(crate) fn terminal_safe_text(text: &str) -> std::borrow::Cow<'_, str> {
    escape_controls(text, true)
}

fn escape_controls(text: &str, keep_layout: bool) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        let layout = c == '\n' || c == '\t';
        (c.is_control() && !(keep_layout && layout))
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !unsafe_char(c) {
            out.push(c);
            continue;
        }
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x80 => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Writes to stdout; a closed pipe (`mcpctl tools | head`) is not an error.
pub(crate) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Writes pretty JSON and a newline to stdout.
pub(crate) fn out_json(value: &serde_json::Value) {
    let mut text = crate::term::render::pretty(value);
    text.push('\n');
    out(&text);
}

/// The width tables are cut to: the terminal's when stdout is one (`$COLUMNS` first, as a
/// shell sets it), none with `--wide` or when stdout is not a terminal (a pipe gets whole
/// cells). Set once by [`set_table_width`].
static TABLE_WIDTH: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();

/// Narrowest width worth cutting a last column to: below it, cells are left whole.
const MIN_LAST_COLUMN: usize = 8;

/// Decides [`TABLE_WIDTH`] for this run (`wide`: the `--wide` flag).
pub(crate) fn set_table_width(wide: bool) {
    use std::io::IsTerminal;
    let width = if wide || !std::io::stdout().is_terminal() {
        None
    } else {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|c| *c > 0)
            .or_else(|| {
                console::Term::stdout()
                    .size_checked()
                    .map(|(_, cols)| usize::from(cols))
            })
    };
    let _ = TABLE_WIDTH.set(width);
}

/// `cell` cut to `room` characters, the last one an ellipsis, when it is longer.
fn cut(cell: &str, room: usize) -> std::borrow::Cow<'_, str> {
    if cell.chars().count() <= room {
        return std::borrow::Cow::Borrowed(cell);
    }
    let mut out: String = cell.chars().take(room.saturating_sub(1)).collect();
    out.push('…');
    std::borrow::Cow::Owned(out)
}

/// Pads cells to aligned columns (the last column is not padded). On a terminal the last
/// column is cut to fit its width ([`set_table_width`]).
pub(crate) fn table(rows: &[Vec<String>]) -> Vec<String> {
    table_painted(rows, |_, _, cell| cell.to_owned())
}

/// [`table`] with each cell passed through `paint(row, column, padded_cell)` after padding,
/// so colour codes do not upset the alignment.
pub(crate) fn table_painted(
    rows: &[Vec<String>],
    paint: impl Fn(usize, usize, &str) -> String,
) -> Vec<String> {
    // Cells hold server-controlled text (descriptions, names, failure messages).
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| crate::term::render::terminal_safe(c).into_owned())
                .collect()
        })
        .collect();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .enumerate()
        .map(|(r, row)| {
            let mut line = String::new();
            let mut used = 0;
            for (c, cell) in row.iter().enumerate() {
                if c + 1 == row.len() {
                    let room = TABLE_WIDTH
                        .get()
                        .copied()
                        .flatten()
                        .map(|w| w.saturating_sub(used))
                        .filter(|room| *room >= MIN_LAST_COLUMN);
                    let cell = match room {
                        Some(room) => cut(cell, room),
                        None => std::borrow::Cow::Borrowed(cell.as_str()),
                    };
                    line.push_str(&paint(r, c, &cell));
                } else {
                    used += widths[c] + 2;
                    let pad = widths[c].saturating_sub(cell.chars().count());
                    line.push_str(&paint(r, c, cell));
                    line.push_str(&" ".repeat(pad + 2));
                }
            }
            line.trim_end().to_owned()
        })
        .collect()
}

/// Prints a warning to stderr.
pub(crate) fn warn(text: &str) {
    let s = crate::term::style::Style::stderr();
    eprintln!(
        "{} {}",
        s.yellow("warning:"),
        crate::term::render::terminal_safe(text)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn a_cell_longer_than_its_room_ends_in_an_ellipsis() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("exactly10!", 10), "exactly10!");
        assert_eq!(cut("a description that goes on", 10), "a descrip…");
        assert_eq!(cut("ünïcödé wörds", 5), "ünïc…");
    }

    #[test]
    fn text_json_and_binary_blocks_are_readable() {
        let result = json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "text", "text": "{\"a\":1}"},
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "body\n"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAECAw=="}},
                {"type": "resource_link", "uri": "file:///c", "name": "c", "mimeType": "text/csv", "size": 2048}
            ],
            "structuredContent": {"a": 1}
        });
        assert_eq!(
            call_result(&result),
            "hello\n{\n  \"a\": 1\n}\n[image: image/png, 5 bytes]\n[audio: audio/wav, 3 bytes]\n\
             [resource file:///a.txt (text/plain)]\nbody\n[resource file:///b.bin: unknown type, 4 bytes]\n\
             [resource link: file:///c (c, text/csv, 2.0 KiB)]\n"
        );
    }

    #[test]
    fn structured_content_not_shown_as_text_is_printed() {
        let result =
            json!({"content": [{"type": "text", "text": "done"}], "structuredContent": {"n": 2}});
        assert_eq!(
            call_result(&result),
            "done\nstructured content:\n{\n  \"n\": 2\n}\n"
        );
        assert_eq!(call_result(&json!({"content": []})), "(no content)\n");
    }

    #[test]
    fn resource_contents_print_text_and_summarize_blobs() {
        let one = json!({"contents": [{"uri": "a://x", "text": "hi\n"}]});
        assert_eq!(resource_contents(&one), "hi\n");
        let two = json!({"contents": [
            {"uri": "a://x", "mimeType": "text/plain", "text": "hi"},
            {"uri": "a://y", "mimeType": "image/png", "blob": "aGVsbG8="}
        ]});
        assert_eq!(
            resource_contents(&two),
            "--- a://x (text/plain) ---\nhi\n[blob a://y: image/png, 5 bytes]\n"
        );
    }

    #[test]
    fn escapes_and_controls_are_shown_escaped() {
        let hostile = "fine\u{1b}[2K\u{1b}]0;title\u{7}\r\u{9b}x\u{202e}txt\nnext\tcol";
        assert_eq!(
            terminal_safe(hostile),
            r"fine\e[2K\e]0;title\x07\r\u{9b}x\u{202e}txt\nnext\tcol"
        );
        assert_eq!(
            terminal_safe_text(hostile),
            "fine\\e[2K\\e]0;title\\x07\\r\\u{9b}x\\u{202e}txt\nnext\tcol"
        );
        assert!(matches!(
            terminal_safe("plain ünïcode"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn base64_lengths() {
        assert_eq!(base64_len(""), 0);
        assert_eq!(base64_len("aGVsbG8="), 5);
        assert_eq!(base64_len("aGVsbG8"), 5);
        assert_eq!(base64_len("aGVsbG8h"), 6);
        assert_eq!(size(1536), "1.5 KiB");
    }
}
