//! JSON with comments (JSONC, as VS Code, Gemini CLI and Zed write it): `//` and `/* */`
//! comments and trailing commas are blanked out with spaces, so that every byte offset,
//! and so every line and column, stays that of the original text.

use std::borrow::Cow;

/// `text` with comments and trailing commas replaced by spaces (newlines kept). Strings are
/// left alone; an unterminated comment or string is left for the JSON parser to report.
pub(crate) fn strip(text: &str) -> Cow<'_, str> {
    if !text.contains(['/', ',']) {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    // The offset of the last comma outside strings, while only blanks follow it.
    let mut pending_comma: Option<usize> = None;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                pending_comma = None;
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    i += 1;
                    match c {
                        b'\\' => i += 1,
                        b'"' => break,
                        _ => {}
                    }
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while let Some(&c) = bytes.get(i) {
                    if c == b'\n' {
                        break;
                    }
                    blank(&mut out, i);
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let Some(end) = text.get(i + 2..).and_then(|rest| rest.find("*/")) else {
                    break;
                };
                let end = i + 2 + end + 2;
                while i < end {
                    blank(&mut out, i);
                    i += 1;
                }
                continue;
            }
            b',' => pending_comma = Some(i),
            b'}' | b']' => {
                if let Some(comma) = pending_comma.take() {
                    blank(&mut out, comma);
                }
            }
            c if c.is_ascii_whitespace() => {}
            _ => pending_comma = None,
        }
        i += 1;
    }
    // Only ASCII bytes outside strings were replaced by ASCII spaces, and every byte of a
    // comment (including all bytes of a multi-byte character) was replaced: still UTF-8.
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(text),
    }
}

fn blank(out: &mut [u8], i: usize) {
    if let Some(b) = out.get_mut(i)
        && *b != b'\n'
        && *b != b'\r'
    {
        *b = b' ';
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_comments_and_trailing_commas_keeping_offsets() {
        let text = "{\n  // a comment, with \"quotes\"\n  \"a\": \"// not a comment\", /* é */\n  \"b\": [1, 2,],\n}\n";
        let stripped = strip(text);
        assert_eq!(stripped.len(), text.len());
        let value: serde_json::Value = serde_json::from_str(&stripped).unwrap();
        assert_eq!(value["a"], "// not a comment");
        assert_eq!(value["b"], serde_json::json!([1, 2]));
        assert_eq!(stripped.lines().count(), text.lines().count());
    }

    proptest::proptest! {
        /// Offsets and lines never move, and text without comments or trailing commas
        /// is left as it is.
        #[test]
        fn keeps_offsets(text in ".*", words in proptest::collection::vec("[a-z/*,\"\\\\]{0,4}", 0..6)) {
            let stripped = strip(&text);
            proptest::prop_assert_eq!(stripped.len(), text.len());
            proptest::prop_assert_eq!(stripped.matches('\n').count(), text.matches('\n').count());
            let json = serde_json::to_string(&words).unwrap();
            proptest::prop_assert_eq!(strip(&json), json.as_str());
        }
    }

    #[test]
    fn leaves_broken_text_for_the_parser() {
        for text in ["{\"a\": \"x", "{/* open", "/", "\"\\", ",]"] {
            let _ = strip(text);
        }
        assert_eq!(strip("[1, 2]"), "[1, 2]");
        assert_eq!(strip("\"a,]\""), "\"a,]\"");
    }
}
