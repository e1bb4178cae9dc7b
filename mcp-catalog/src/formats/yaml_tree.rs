//! A small YAML tree with positions, built from yaml-rust2's events (its own tree keeps
//! none), so that Goose's `config.yaml` errors can carry a line and column.

use yaml_rust2::Event;
use yaml_rust2::parser::Parser;
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Deeper documents are refused rather than recursed into.
const MAX_DEPTH: usize = 64;

/// A YAML value and the byte offset where it starts.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) offset: usize,
    pub(crate) value: YValue,
}

/// The shapes a configuration uses.
#[derive(Debug)]
pub(crate) enum YValue {
    /// A scalar; `plain` when unquoted (so `true` and `300` may be a boolean or number).
    Scalar {
        text: String,
        plain: bool,
    },
    Seq(Vec<Node>),
    /// Entries in document order: key, the key's offset, value.
    Map(Vec<(String, usize, Node)>),
}

impl YValue {
    /// The type with an article, for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            YValue::Scalar { plain: true, text } if text.is_empty() || text == "~" => "null",
            YValue::Scalar { .. } => "a scalar",
            YValue::Seq(_) => "a list",
            YValue::Map(_) => "a mapping",
        }
    }
}

/// Why the text is not a usable YAML document: a byte offset and a message.
pub(crate) type YamlError = (usize, String);

/// Parses the first document of `text` (an empty text is an empty mapping).
pub(crate) fn parse(text: &str) -> Result<Node, YamlError> {
    let mut b = Builder {
        parser: Parser::new_from_str(text),
        char_starts: text.char_indices().map(|(i, _)| i).collect(),
        len: text.len(),
    };
    loop {
        let (event, mark) = b.next()?;
        match event {
            Event::StreamStart | Event::DocumentStart | Event::Nothing => {}
            Event::StreamEnd | Event::DocumentEnd => {
                return Ok(Node {
                    offset: b.offset(mark),
                    value: YValue::Map(Vec::new()),
                });
            }
            other => return b.node(other, mark, 0),
        }
    }
}

struct Builder<'a> {
    parser: Parser<std::str::Chars<'a>>,
    char_starts: Vec<usize>,
    len: usize,
}

impl Builder<'_> {
    fn offset(&self, mark: Marker) -> usize {
        self.char_starts
            .get(mark.index())
            .copied()
            .unwrap_or(self.len)
    }

    fn next(&mut self) -> Result<(Event, Marker), YamlError> {
        self.parser.next_token().map_err(|e| {
            let offset = self.offset(*e.marker());
            (offset, format!("invalid YAML: {}", e.info()))
        })
    }

    fn node(&mut self, event: Event, mark: Marker, depth: usize) -> Result<Node, YamlError> {
        let offset = self.offset(mark);
        if depth > MAX_DEPTH {
            return Err((offset, "the YAML is nested too deeply".to_owned()));
        }
        let value = match event {
            Event::Scalar(text, style, _, _) => YValue::Scalar {
                text,
                plain: style == TScalarStyle::Plain,
            },
            Event::SequenceStart(..) => {
                let mut items = Vec::new();
                loop {
                    let (event, mark) = self.next()?;
                    if event == Event::SequenceEnd {
                        break;
                    }
                    items.push(self.node(event, mark, depth + 1)?);
                }
                YValue::Seq(items)
            }
            Event::MappingStart(..) => {
                let mut entries = Vec::new();
                loop {
                    let (event, mark) = self.next()?;
                    let key = match event {
                        Event::MappingEnd => break,
                        Event::Scalar(key, ..) => key,
                        _ => {
                            return Err((
                                self.offset(mark),
                                "a mapping key must be a plain value".to_owned(),
                            ));
                        }
                    };
                    let key_offset = self.offset(mark);
                    let (event, mark) = self.next()?;
                    entries.push((key, key_offset, self.node(event, mark, depth + 1)?));
                }
                YValue::Map(entries)
            }
            Event::Alias(_) => {
                return Err((
                    offset,
                    "YAML aliases (`*name`) are not supported here".to_owned(),
                ));
            }
            _ => return Err((offset, "unexpected YAML structure".to_owned())),
        };
        Ok(Node { offset, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_byte_offsets() {
        let text = "é: 1\nb:\n  - x\n  - \"y\"\n";
        let root = parse(text).unwrap();
        let YValue::Map(entries) = root.value else {
            panic!("a mapping")
        };
        assert_eq!(entries[0].0, "é");
        assert_eq!(entries[1].1, text.find("b:").unwrap());
        let YValue::Seq(items) = &entries[1].2.value else {
            panic!("a list")
        };
        assert_eq!(items[1].offset, text.find("\"y\"").unwrap());
    }

    #[test]
    fn errors_are_located() {
        let (offset, message) = parse("a: [1,\nb: }").unwrap_err();
        assert!(
            offset > 0 && message.starts_with("invalid YAML"),
            "{offset} {message}"
        );
        assert!(parse("a: *x").is_err());
        assert!(parse(&"[".repeat(100)).is_err());
        assert!(matches!(parse("").unwrap().value, YValue::Map(_)));
    }
}
