//! A BERT-style WordPiece tokenizer read from a Hugging Face `tokenizer.json`: what a
//! model2vec static model needs (normalize, split, greedy longest-match sub-words), in
//! plain Rust instead of the `tokenizers` crate and its C/C++ regex options.
//!
//! Supported: a `WordPiece` model with a `BertNormalizer` (or none) and a
//! `BertPreTokenizer` (or none). Anything else is an error that names the part, so a model
//! with another tokenizer fails at load time instead of embedding nonsense.

use crate::FastMap;

use serde::Deserialize;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// The parts of `tokenizer.json` read here.
#[derive(Deserialize)]
struct File {
    normalizer: Option<Normalizer>,
    pre_tokenizer: Option<PreTokenizer>,
    model: Model,
}

#[derive(Deserialize)]
struct Normalizer {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default = "yes")]
    clean_text: bool,
    #[serde(default = "yes")]
    handle_chinese_chars: bool,
    strip_accents: Option<bool>,
    #[serde(default = "yes")]
    lowercase: bool,
}

#[derive(Deserialize)]
struct PreTokenizer {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    vocab: FastMap<String, u32>,
    #[serde(default = "continuing")]
    continuing_subword_prefix: String,
    #[serde(default = "max_chars")]
    max_input_chars_per_word: usize,
}

fn yes() -> bool {
    true
}

fn continuing() -> String {
    "##".to_owned()
}

fn max_chars() -> usize {
    100
}

/// A loaded WordPiece tokenizer.
#[derive(Debug)]
pub(crate) struct WordPiece {
    vocab: FastMap<String, u32>,
    prefix: String,
    max_chars: usize,
    clean_text: bool,
    chinese_chars: bool,
    strip_accents: bool,
    lowercase: bool,
}

impl WordPiece {
    /// Parses a `tokenizer.json`; the error says which part is missing or unsupported.
    pub(crate) fn from_json(text: &str) -> Result<Self, String> {
        let file: File = serde_json::from_str(text).map_err(|e| format!("tokenizer.json: {e}"))?;
        if file.model.kind != "WordPiece" {
            return Err(format!(
                "tokenizer.json: the model is {:?}; only WordPiece tokenizers are supported",
                file.model.kind
            ));
        }
        if let Some(pre) = &file.pre_tokenizer
            && pre.kind != "BertPreTokenizer"
        {
            return Err(format!(
                "tokenizer.json: the pre-tokenizer is {:?}; only BertPreTokenizer is supported",
                pre.kind
            ));
        }
        let (clean_text, chinese_chars, strip_accents, lowercase) = match &file.normalizer {
            None => (false, false, false, false),
            Some(n) if n.kind == "BertNormalizer" => (
                n.clean_text,
                n.handle_chinese_chars,
                // As in `tokenizers`: unset means "strip when lowercasing".
                n.strip_accents.unwrap_or(n.lowercase),
                n.lowercase,
            ),
            Some(n) => {
                return Err(format!(
                    "tokenizer.json: the normalizer is {:?}; only BertNormalizer is supported",
                    n.kind
                ));
            }
        };
        Ok(Self {
            vocab: file.model.vocab,
            prefix: file.model.continuing_subword_prefix,
            max_chars: file.model.max_input_chars_per_word,
            clean_text,
            chinese_chars,
            strip_accents,
            lowercase,
        })
    }

    /// The largest token id plus one.
    pub(crate) fn vocab_len(&self) -> usize {
        self.vocab.values().max().map_or(0, |&m| {
            usize::try_from(m).unwrap_or(usize::MAX).saturating_add(1)
        })
    }

    /// Appends the token ids of `text` to `out`, unknown words left out, stopping at `max`
    /// tokens.
    pub(crate) fn encode(&self, text: &str, max: usize, out: &mut Vec<u32>) {
        let normalized = self.normalize(text);
        let mut piece = String::new();
        for word in pre_tokenize(&normalized) {
            if out.len() >= max {
                break;
            }
            self.word(word, &mut piece, out);
        }
        out.truncate(max);
    }

    /// The BERT normalizer: control characters dropped, whitespace made a space, CJK
    /// characters padded with spaces, accents stripped, lowercase.
    fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            if self.clean_text {
                if c == '\0' || c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()) {
                    continue;
                }
                if c.is_whitespace() {
                    out.push(' ');
                    continue;
                }
            }
            if self.chinese_chars && is_cjk(c) {
                out.push(' ');
                out.push(c);
                out.push(' ');
            } else {
                out.push(c);
            }
        }
        // ASCII has no decompositions and no combining marks, and lowercases byte by
        // byte: most tool text takes this path, which gives the same result faster.
        if out.is_ascii() {
            if self.lowercase {
                out.make_ascii_lowercase();
            }
            return out;
        }
        let mut out = if self.strip_accents {
            out.nfd().filter(|&c| !is_combining_mark(c)).collect()
        } else {
            out
        };
        if self.lowercase {
            out = out.to_lowercase();
        }
        out
    }

    /// Greedy longest-match-first sub-words of one word; a word with a part that matches
    /// nothing is unknown as a whole (and left out, as model2vec leaves unknown tokens out).
    fn word(&self, word: &str, piece: &mut String, out: &mut Vec<u32>) {
        if word.chars().count() > self.max_chars {
            return;
        }
        let kept = out.len();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while end > start {
                piece.clear();
                if start > 0 {
                    piece.push_str(&self.prefix);
                }
                piece.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(piece.as_str()) {
                    found = Some(id);
                    break;
                }
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map_or(start, |(i, _)| i);
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(kept);
                    return;
                }
            }
        }
    }
}

/// The BERT pre-tokenizer: split at whitespace (dropped) and around each punctuation
/// character (kept as a word of its own). Punctuation is any character that is neither
/// alphanumeric, whitespace nor a combining mark (Unicode's P and S categories, which the
/// standard library does not tell apart; BERT keeps some symbols inside words).
fn pre_tokenize(text: &str) -> impl Iterator<Item = &str> {
    text.split_whitespace().flat_map(|chunk| {
        let mut words = Vec::new();
        let mut start = 0;
        for (i, c) in chunk.char_indices() {
            let punctuation = if c.is_ascii() {
                !c.is_ascii_alphanumeric()
            } else {
                !c.is_alphanumeric() && !is_combining_mark(c)
            };
            if punctuation {
                if start < i {
                    words.push(&chunk[start..i]);
                }
                words.push(&chunk[i..i + c.len_utf8()]);
                start = i + c.len_utf8();
            }
        }
        if start < chunk.len() {
            words.push(&chunk[start..]);
        }
        words
    })
}

/// The CJK Unified Ideographs blocks BERT pads with spaces.
fn is_cjk(c: char) -> bool {
    matches!(u32::from(c),
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer() -> WordPiece {
        let json = serde_json::json!({
            "normalizer": {"type": "BertNormalizer", "lowercase": true, "strip_accents": null},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "model": {
                "type": "WordPiece",
                "unk_token": "[UNK]",
                "continuing_subword_prefix": "##",
                "max_input_chars_per_word": 100,
                "vocab": {"[UNK]": 0, "read": 1, "file": 2, "##s": 3, "_": 4, "cafe": 5,
                          "un": 6, "##related": 7, "北": 8, "京": 9}
            }
        });
        WordPiece::from_json(&json.to_string()).unwrap()
    }

    fn ids(text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        tokenizer().encode(text, 512, &mut out);
        out
    }

    #[test]
    fn splits_words_punctuation_and_sub_words_like_bert() {
        assert_eq!(ids("Read_FILES"), [1, 4, 2, 3]);
        assert_eq!(ids("  Café\tunrelated "), [5, 6, 7]);
        assert_eq!(ids("北京"), [8, 9]);
        // A word with a part outside the vocabulary is left out whole.
        assert_eq!(ids("reads readx file"), [1, 3, 2]);
        let mut out = Vec::new();
        tokenizer().encode("read file read file", 3, &mut out);
        assert_eq!(out, [1, 2, 1]);
    }

    #[test]
    fn ascii_text_and_text_with_accents_normalize_alike() {
        // "Read_FILES cafe" is all ASCII (the fast path); with "Café" the same words go
        // through NFD and Unicode lowercasing, and must come out the same.
        assert_eq!(ids("Read_FILES cafe"), [1, 4, 2, 3, 5]);
        assert_eq!(ids("Read_FILES Café"), ids("Read_FILES cafe"));
        assert_eq!(ids("READ\u{0} file\u{7}s"), [1, 2, 3]);
    }

    #[test]
    fn other_tokenizers_are_refused_by_name() {
        let json = r#"{"model": {"type": "BPE", "vocab": {}, "unk_token": "x"}}"#;
        let err = WordPiece::from_json(json).unwrap_err();
        assert!(
            err.contains("\"BPE\"") && err.contains("WordPiece"),
            "{err}"
        );
    }
}
