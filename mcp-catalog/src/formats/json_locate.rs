//! Finds the byte offset of an object key in JSON text, so that `.mcp.json` errors can
//! carry a line and column. `serde_json::Value` keeps no positions; this small scanner walks
//! text that serde_json already accepted and never panics on any input.

/// The offset of the key at the end of `path` (object keys from the root), if present.
pub(crate) fn locate(text: &str, path: &[&str]) -> Option<usize> {
    let mut scan = Scan { text, i: 0 };
    let mut found = None;
    for key in path {
        scan.ws();
        found = Some(scan.find_key(key)?);
    }
    found
}

/// One step of a path into JSON text: an object key or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// A member of an object.
    Key(String),
    /// An element of an array (0-based).
    Index(usize),
}

/// The offset of the value or key at the end of `path` (keys and indexes from the root):
/// a key's offset for a [`Step::Key`], the element's own offset for a [`Step::Index`].
pub(crate) fn locate_steps(text: &str, path: &[Step]) -> Option<usize> {
    let mut scan = Scan { text, i: 0 };
    let mut found = None;
    for step in path {
        scan.ws();
        found = Some(match step {
            Step::Key(key) => scan.find_key(key)?,
            Step::Index(index) => scan.find_index(*index)?,
        });
    }
    found
}

struct Scan<'a> {
    text: &'a str,
    i: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    /// At `"`: skips the string and returns its decoded value.
    fn string(&mut self) -> Option<String> {
        let start = self.i;
        if self.peek() != Some(b'"') {
            return None;
        }
        self.i += 1;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    break;
                }
                _ => self.i += 1,
            }
        }
        serde_json::from_str(self.text.get(start..self.i)?).ok()
    }

    /// Skips one value of any kind.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.i += 1;
                }
                b'}' | b']' => {
                    if depth == 0 {
                        return Some(());
                    }
                    depth -= 1;
                    self.i += 1;
                }
                b',' if depth == 0 => return Some(()),
                _ => self.i += 1,
            }
            if depth == 0 && self.peek().is_none_or(|b| matches!(b, b',' | b'}' | b']')) {
                return Some(());
            }
        }
    }

    /// At `[`: finds the element at `index`, leaves the cursor on it and returns its offset.
    fn find_index(&mut self, index: usize) -> Option<usize> {
        if self.peek() != Some(b'[') {
            return None;
        }
        self.i += 1;
        for _ in 0..index {
            self.ws();
            self.skip_value()?;
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                _ => return None,
            }
        }
        self.ws();
        match self.peek()? {
            b']' => None,
            _ => Some(self.i),
        }
    }

    /// At `{`: finds `key` among the members, leaves the cursor on its value and returns
    /// the offset of the key.
    fn find_key(&mut self, key: &str) -> Option<usize> {
        if self.peek() != Some(b'{') {
            return None;
        }
        self.i += 1;
        loop {
            self.ws();
            let key_start = self.i;
            let name = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return None;
            }
            self.i += 1;
            self.ws();
            if name == key {
                return Some(key_start);
            }
            self.skip_value()?;
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys() {
        let text = r#"{"a": [1, {"b": "}"}], "mcpServers": {"x": {"url": 1}, "y\u0041": {"command": "c"}}}"#;
        assert_eq!(locate(text, &["mcpServers"]), text.find("\"mcpServers\""));
        assert_eq!(
            locate(text, &["mcpServers", "x", "url"]),
            text.find("\"url\"")
        );
        assert_eq!(
            locate(text, &["mcpServers", "yA", "command"]),
            text.find("\"command\"")
        );
        assert_eq!(locate(text, &["mcpServers", "z"]), None);
        assert_eq!(locate("{\"a\" 1", &["a"]), None);
        assert_eq!(locate("\"", &["a"]), None);
    }

    #[test]
    fn finds_array_elements() {
        let text = r#"{"p": [{"v": "1"}, {"v": [2, "]"]}, {"v": 3}]}"#;
        let key = |k: &str| Step::Key(k.to_owned());
        let at = |steps: &[Step]| locate_steps(text, steps);
        assert_eq!(at(&[key("p"), Step::Index(0)]), text.find("{\"v\": \"1"));
        assert_eq!(
            at(&[key("p"), Step::Index(2), key("v")]),
            text.rfind("\"v\"")
        );
        assert_eq!(
            at(&[key("p"), Step::Index(1), key("v"), Step::Index(1)]),
            text.find("\"]\"")
        );
        assert_eq!(at(&[key("p"), Step::Index(3)]), None);
        assert_eq!(at(&[key("p"), Step::Index(0), Step::Index(0)]), None);
        assert_eq!(locate_steps("[]", &[Step::Index(0)]), None);
    }
}
