//! One server's part of the index, and the statistics summed over all servers.

use crate::FastMap;
use std::mem::size_of;

use mcp_key::McpServerKey;

use crate::analyze::{Analyzer, pieces};
use crate::document::{Document, FIELDS};
use crate::error::SearchError;
use crate::tool::{EntryKind, ToolDef, qualified_name};

/// One tool of a segment.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) qualified: String,
    pub(crate) len: [u32; FIELDS],
    /// How many pieces the raw name splits into (`read_file`: 2).
    pub(crate) name_pieces: u32,
    /// A tool or a skill.
    pub(crate) kind: EntryKind,
}

/// A term's occurrence in one tool: its frequency in each field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Posting {
    pub(crate) tool: u32,
    pub(crate) tf: [u16; FIELDS],
}

/// One server's tools and postings. Immutable once built; shared by index snapshots.
#[derive(Debug)]
pub(crate) struct Segment {
    pub(crate) server: McpServerKey,
    /// Sorted by name (a tool before a skill of the same name).
    pub(crate) tools: Vec<Entry>,
    pub(crate) postings: FastMap<Box<str>, Vec<Posting>>,
    /// Lowercased exact-match names (raw, qualified, aliases) -> tool.
    pub(crate) exact: FastMap<String, u32>,
    /// Sum of every tool's length per field.
    pub(crate) len_sum: [u64; FIELDS],
    /// One embedding per tool (of length 1, or zero), or none without an embedder.
    pub(crate) vectors: Vec<Vec<f32>>,
    /// A hash of the text each vector was embedded from, to reuse it when the server is
    /// indexed again with that tool unchanged.
    pub(crate) text_hashes: Vec<u64>,
}

impl Segment {
    /// The segment of `server` with `tools` (any order; sorted by name here).
    pub(crate) fn build(
        analyzer: &Analyzer,
        server: McpServerKey,
        tools: &mut [ToolDef],
    ) -> Result<Self, SearchError> {
        tools.sort_by(|a, b| (a.name(), a.kind()).cmp(&(b.name(), b.kind())));
        if let Some(pair) = tools
            .windows(2)
            .find(|p| (p[0].name(), p[0].kind()) == (p[1].name(), p[1].kind()))
        {
            let (server, name) = (server.to_string(), pair[0].name().to_owned());
            return Err(match pair[0].kind() {
                EntryKind::Skill => SearchError::DuplicateSkill {
                    server,
                    skill: name,
                },
                _ => SearchError::DuplicateTool { server, tool: name },
            });
        }
        let server_text = server.to_string();
        let mut postings: FastMap<Box<str>, Vec<Posting>> = FastMap::default();
        let mut entries = Vec::with_capacity(tools.len());
        let mut exact = FastMap::default();
        let mut len_sum = [0u64; FIELDS];
        for (i, tool) in tools.iter().enumerate() {
            let idx = u32::try_from(i).unwrap_or(u32::MAX);
            let doc = Document::build(analyzer, &server_text, tool);
            for (term, tf) in doc.tf {
                postings
                    .entry(term.into_boxed_str())
                    .or_default()
                    .push(Posting { tool: idx, tf });
            }
            for (sum, len) in len_sum.iter_mut().zip(doc.len) {
                *sum += u64::from(len);
            }
            let qualified = qualified_name(&server, tool.name());
            for form in [tool.name(), qualified.as_str()]
                .into_iter()
                .chain(tool.aliases().iter().map(String::as_str))
            {
                exact.entry(form.trim().to_lowercase()).or_insert(idx);
            }
            let mut name_pieces = 0;
            pieces(tool.name(), |_, _| name_pieces += 1);
            entries.push(Entry {
                name: tool.name().to_owned(),
                qualified,
                len: doc.len,
                name_pieces,
                kind: tool.kind(),
            });
        }
        for list in postings.values_mut() {
            list.sort_by_key(|p| p.tool);
            list.shrink_to_fit();
        }
        postings.shrink_to_fit();
        Ok(Self {
            server,
            tools: entries,
            postings,
            exact,
            len_sum,
            vectors: Vec::new(),
            text_hashes: Vec::new(),
        })
    }

    /// How many heap bytes this segment holds, approximately (capacities times element
    /// sizes, plus one control byte per hash-table slot).
    pub(crate) fn heap_bytes(&self) -> usize {
        let mut n = self.tools.capacity() * size_of::<Entry>();
        for e in &self.tools {
            n += e.name.capacity() + e.qualified.capacity();
        }
        n += map_bytes::<Box<str>, Vec<Posting>>(self.postings.capacity());
        for (k, v) in &self.postings {
            n += k.len() + v.capacity() * size_of::<Posting>();
        }
        n += map_bytes::<String, u32>(self.exact.capacity());
        n += self.exact.keys().map(String::capacity).sum::<usize>();
        n += self.vectors.capacity() * size_of::<Vec<f32>>();
        n += self.text_hashes.capacity() * size_of::<u64>();
        n += self
            .vectors
            .iter()
            .map(|v| v.capacity() * size_of::<f32>())
            .sum::<usize>();
        n
    }
}

/// Bytes of a hash table's slots.
pub(crate) fn map_bytes<K, V>(capacity: usize) -> usize {
    capacity * (size_of::<K>() + size_of::<V>() + 1)
}

/// Corpus statistics over every segment: kept in step as segments come and go.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stats {
    pub(crate) tools: u64,
    pub(crate) servers: u64,
    pub(crate) len_sum: [u64; FIELDS],
    /// Term -> number of tools that have it (any field).
    pub(crate) df: FastMap<Box<str>, u32>,
    /// Term -> number of servers that have it.
    pub(crate) server_df: FastMap<Box<str>, u32>,
    /// Lowercased exact-match name -> the tools that answer to it.
    pub(crate) exact: FastMap<Box<str>, Vec<(McpServerKey, u32)>>,
}

impl Stats {
    /// Counts `seg` in.
    pub(crate) fn add(&mut self, seg: &Segment) {
        self.tools += seg.tools.len() as u64;
        self.servers += 1;
        for (sum, len) in self.len_sum.iter_mut().zip(seg.len_sum) {
            *sum += len;
        }
        for (term, list) in &seg.postings {
            let n = u32::try_from(list.len()).unwrap_or(u32::MAX);
            match self.df.get_mut(term) {
                Some(df) => *df += n,
                None => {
                    self.df.insert(term.clone(), n);
                }
            }
            match self.server_df.get_mut(term) {
                Some(df) => *df += 1,
                None => {
                    self.server_df.insert(term.clone(), 1);
                }
            }
        }
        for (form, &tool) in &seg.exact {
            let list = self.exact.entry(form.as_str().into()).or_default();
            list.push((seg.server.clone(), tool));
            list.sort();
        }
    }

    /// Counts `seg` out (it was counted in before).
    pub(crate) fn remove(&mut self, seg: &Segment) {
        self.tools -= seg.tools.len() as u64;
        self.servers -= 1;
        for (sum, len) in self.len_sum.iter_mut().zip(seg.len_sum) {
            *sum -= len;
        }
        for (term, list) in &seg.postings {
            let n = u32::try_from(list.len()).unwrap_or(u32::MAX);
            if let Some(df) = self.df.get_mut(term) {
                *df = df.saturating_sub(n);
                if *df == 0 {
                    self.df.remove(term);
                }
            }
            if let Some(df) = self.server_df.get_mut(term) {
                *df = df.saturating_sub(1);
                if *df == 0 {
                    self.server_df.remove(term);
                }
            }
        }
        for form in seg.exact.keys() {
            if let Some(list) = self.exact.get_mut(form.as_str()) {
                list.retain(|(server, _)| *server != seg.server);
                if list.is_empty() {
                    self.exact.remove(form.as_str());
                }
            }
        }
    }

    /// Approximate heap bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        map_bytes::<Box<str>, u32>(self.df.capacity())
            + map_bytes::<Box<str>, u32>(self.server_df.capacity())
            + self.df.keys().map(|k| k.len()).sum::<usize>()
            + self.server_df.keys().map(|k| k.len()).sum::<usize>()
            + map_bytes::<Box<str>, Vec<(McpServerKey, u32)>>(self.exact.capacity())
            + self
                .exact
                .iter()
                .map(|(k, v)| k.len() + v.capacity() * size_of::<(McpServerKey, u32)>())
                .sum::<usize>()
    }
}
