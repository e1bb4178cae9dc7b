//! Text analysis: text -> terms.
//!
//! Words come from Unicode word boundaries (UAX #29, `unicode-segmentation`), so marks stay
//! with their letters and punctuation of every script separates. Inside a word, `_`, `.`,
//! `'`, `:` and other ASCII punctuation, a lower-to-upper change (`camelCase`,
//! `HTTPServer` -> `http` `server`) and a letter-digit change split again. Runs of Han,
//! Hiragana and Katakana characters, which no space separates, become overlapping character
//! bigrams (a lone character stays a unigram), the usual lossless choice without a
//! dictionary. Then each Latin piece is lowercased, English stop words (NLTK's list, from
//! `stop-words`) are dropped, and the rest is stemmed (Snowball English, `rust-stemmers`).

use std::collections::HashSet;

use crate::FastMap;
use std::sync::{Mutex, PoisonError};

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation;

/// Distinct lowercased words whose stems [`Analyzer`] remembers; when full it starts over.
/// Building an index stems every word of every tool, and a catalog's vocabulary is small
/// next to its text (3,361 tools: about 20,000 distinct words in 300,000).
const STEM_CACHE_WORDS: usize = 65_536;

/// Turns text into index terms. Cheap to share: build one per index.
pub(crate) struct Analyzer {
    stemmer: Stemmer,
    stop: HashSet<&'static str>,
    /// Lowercased word -> its term (stemmed, or the word where the stem is empty).
    stems: Mutex<FastMap<String, Box<str>>>,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("stop_words", &self.stop.len())
            .finish_non_exhaustive()
    }
}

impl Analyzer {
    /// The English analyzer.
    pub(crate) fn new() -> Self {
        let stop = stop_words::lookup("en")
            .unwrap_or_default()
            .iter()
            .copied()
            .collect();
        Self {
            stemmer: Stemmer::create(Algorithm::English),
            stop,
            stems: Mutex::default(),
        }
    }

    /// Appends the terms of `text` to `out`, stop words dropped.
    pub(crate) fn terms(&self, text: &str, out: &mut Vec<String>) {
        self.terms_with(text, true, out);
    }

    /// Appends the terms of `text` to `out`; `drop_stop` says whether stop words go.
    pub(crate) fn terms_with(&self, text: &str, drop_stop: bool, out: &mut Vec<String>) {
        pieces(text, |piece, cjk| {
            if cjk {
                out.push(piece.to_owned());
                return;
            }
            let lower = piece.to_lowercase();
            if drop_stop && self.stop.contains(lower.as_str()) {
                return;
            }
            out.push(self.term(lower));
        });
    }

    /// How many heap bytes the stem cache holds, approximately.
    pub(crate) fn heap_bytes(&self) -> usize {
        let stems = self.stems.lock().unwrap_or_else(PoisonError::into_inner);
        let table = stems.capacity() * (std::mem::size_of::<(String, Box<str>)>() + 1);
        table
            + stems
                .iter()
                .map(|(k, v)| k.capacity() + v.len())
                .sum::<usize>()
    }

    /// The term of a lowercased word: its stem, or the word where the stem is empty.
    fn term(&self, lower: String) -> String {
        let mut stems = self.stems.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(term) = stems.get(&lower) {
            return term.to_string();
        }
        let stemmed = self.stemmer.stem(&lower);
        let term = if stemmed.is_empty() {
            lower.clone()
        } else {
            stemmed.into_owned()
        };
        if stems.len() >= STEM_CACHE_WORDS {
            stems.clear();
        }
        stems.insert(lower, term.as_str().into());
        term
    }

    /// Appends the stemmed concatenations of adjacent Latin words of `text` (`event grid`
    /// -> `eventgrid`): names often join what a request writes apart.
    pub(crate) fn compounds(&self, text: &str, out: &mut Vec<String>) {
        let mut prev: Option<String> = None;
        pieces(text, |piece, cjk| {
            if cjk || !piece.chars().all(char::is_alphabetic) {
                prev = None;
                return;
            }
            let lower = piece.to_lowercase();
            if let Some(p) = prev.take() {
                let joined = format!("{p}{lower}");
                out.push(self.stemmer.stem(&joined).into_owned());
            }
            prev = Some(lower);
        });
    }

    /// Appends, for each Latin word of `text` that `known` does not know, the stemmed two
    /// parts it splits into that `known` both knows (`cosmosdb` -> `cosmos` `db`).
    pub(crate) fn splits(&self, text: &str, known: impl Fn(&str) -> bool, out: &mut Vec<String>) {
        pieces(text, |piece, cjk| {
            // Words longer than 32 letters are no compound of two names: not worth the tries.
            if cjk
                || !(6..=32).contains(&piece.len())
                || !piece.chars().all(|c| c.is_ascii_alphabetic())
            {
                return;
            }
            let lower = piece.to_ascii_lowercase();
            if known(&self.stemmer.stem(&lower)) || self.stop.contains(lower.as_str()) {
                return;
            }
            let best = (3..=lower.len() - 2)
                .filter_map(|i| {
                    let (a, b) = lower.split_at(i);
                    let (a, b) = (self.stemmer.stem(a), self.stemmer.stem(b));
                    (known(&a) && known(&b))
                        .then(|| (i.min(lower.len() - i), a.into_owned(), b.into_owned()))
                })
                .max_by_key(|(balance, _, _)| *balance);
            if let Some((_, a, b)) = best {
                out.push(a);
                out.push(b);
            }
        });
    }
}

/// Whether `c` is written without spaces between words (Han, Hiragana, Katakana).
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF        // Hiragana, Katakana
        | 0x31F0..=0x31FF      // Katakana phonetic extensions
        | 0x3400..=0x4DBF      // CJK extension A
        | 0x4E00..=0x9FFF      // CJK unified ideographs
        | 0xF900..=0xFAFF      // CJK compatibility ideographs
        | 0xFF66..=0xFF9F      // half-width Katakana
        | 0x20000..=0x3134F    // CJK extensions B-G
    )
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Sep,
}

fn class(c: char) -> Class {
    if c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric()) {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_alphabetic() || (!c.is_ascii() && !c.is_whitespace()) {
        // Lowercase and uncased letters, and non-ASCII marks inside a word.
        Class::Lower
    } else {
        Class::Sep
    }
}

/// Calls `emit(piece, is_cjk)` for every piece of `text`, in order.
pub(crate) fn pieces(text: &str, mut emit: impl FnMut(&str, bool)) {
    let mut cjk_run: Vec<(usize, usize)> = Vec::new();
    let flush_cjk = |run: &mut Vec<(usize, usize)>, emit: &mut dyn FnMut(&str, bool)| {
        match run.len() {
            0 => {}
            1 => emit(&text[run[0].0..run[0].1], true),
            _ => {
                for pair in run.windows(2) {
                    emit(&text[pair[0].0..pair[1].1], true);
                }
            }
        }
        run.clear();
    };
    let mut last_end = 0;
    for (start, word) in text.unicode_word_indices() {
        if start != last_end {
            flush_cjk(&mut cjk_run, &mut emit);
        }
        last_end = start + word.len();
        let mut latin_start: Option<usize> = None;
        let mut prev = Class::Sep;
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        for (i, &(off, c)) in chars.iter().enumerate() {
            let at = start + off;
            if is_cjk(c) {
                if let Some(s) = latin_start.take() {
                    emit(&text[s..at], false);
                }
                cjk_run.push((at, at + c.len_utf8()));
                prev = Class::Sep;
                continue;
            }
            flush_cjk(&mut cjk_run, &mut emit);
            let cls = class(c);
            if cls == Class::Sep {
                if let Some(s) = latin_start.take() {
                    emit(&text[s..at], false);
                }
                prev = cls;
                continue;
            }
            let next = chars.get(i + 1).map(|&(_, n)| class(n));
            let boundary = match (prev, cls) {
                (Class::Sep, _) => false,
                (Class::Lower, Class::Upper) => true,
                // `HTTPServer`: the last capital of a run starts the next word.
                (Class::Upper, Class::Upper) => next == Some(Class::Lower),
                (Class::Digit, Class::Digit) => false,
                (Class::Digit, _) | (_, Class::Digit) => true,
                _ => false,
            };
            if boundary && let Some(s) = latin_start.take() {
                emit(&text[s..at], false);
            }
            if latin_start.is_none() {
                latin_start = Some(at);
            }
            prev = cls;
        }
        if let Some(s) = latin_start {
            emit(&text[s..start + word.len()], false);
        }
    }
    flush_cjk(&mut cjk_run, &mut emit);
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn split(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        pieces(text, |p, _| out.push(p.to_owned()));
        out
    }

    fn terms(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Analyzer::new().terms(text, &mut out);
        out
    }

    #[test]
    fn names_split_on_separators_case_and_digits() {
        assert_eq!(split("acr_registry_list"), ["acr", "registry", "list"]);
        assert_eq!(split("get-douban-rank"), ["get", "douban", "rank"]);
        assert_eq!(split("fs.read.file"), ["fs", "read", "file"]);
        assert_eq!(
            split("azure/aks_nodepool_get"),
            ["azure", "aks", "nodepool", "get"]
        );
        assert_eq!(split("getTickerInfo"), ["get", "Ticker", "Info"]);
        assert_eq!(split("HTTPServer2go"), ["HTTP", "Server", "2", "go"]);
        assert_eq!(
            split("base64Encode v10"),
            ["base", "64", "Encode", "v", "10"]
        );
        assert_eq!(split("it's 18.9g"), ["it", "s", "18", "9", "g"]);
    }

    #[test]
    fn cjk_runs_become_bigrams_and_nothing_is_lost() {
        assert_eq!(split("查询天气"), ["查询", "询天", "天气"]);
        assert_eq!(split("查"), ["查"]);
        // Mixed with Latin, and separated by CJK punctuation.
        assert_eq!(
            split("12306火车票，查询"),
            ["12306", "火车", "车票", "查询"]
        );
        assert_eq!(split("カタカナ"), ["カタ", "タカ", "カナ"]);
        // Hangul is spaced: one word each.
        assert_eq!(split("주식 정보"), ["주식", "정보"]);
        // Marks stay with their letters.
        assert_eq!(split("नमस्ते दुनिया"), ["नमस्ते", "दुनिया"]);
    }

    #[test]
    fn terms_are_lowercased_stemmed_and_stop_words_go() {
        assert_eq!(
            terms("List the Registries of my containers"),
            ["list", "registri", "contain"]
        );
        assert_eq!(terms("registry"), ["registri"]);
        assert_eq!(terms("Running runs"), ["run", "run"]);
        assert_eq!(terms("天气 weather"), ["天气", "weather"]);
    }

    #[test]
    fn control_characters_separate() {
        assert_eq!(split("a\u{0}b\u{7}\u{1b}[0mc"), ["a", "b", "0", "mc"]);
        assert!(split("\u{0}\u{1}\u{2}\t\n").is_empty());
    }
}
