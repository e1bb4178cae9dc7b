//! The reference host's method, as a baseline to compare against.

use std::collections::HashMap;

use mcp_key::McpServerKey;

use crate::document::schema_texts;
use crate::tool::{ToolDef, qualified_name};

/// Plain BM25 (k1 = 1.2, b = 0.75) over one text per tool made of the tool name, the server
/// name, the description and every schema property name and description; lowercase
/// alphanumeric tokens, no stemming, no stop words, no field weights; each distinct query
/// token counts once.
///
/// On the benchmark's public queries it scores top-1 54.1 %, top-5 77.7 % (the issue's
/// reimplementation: 55.8 %, 78.4 %); counting repeated query tokens again would give
/// 50.5 %, 78.1 %.
///
/// This is how the reference host (OpenAI Codex) searches deferred MCP tools; the benchmark
/// (`mcp-bench tool-search`) reports it beside [`ToolIndex`](crate::ToolIndex) so the
/// difference is measured in the same run. Not meant for production use.
#[derive(Debug, Default)]
pub struct Bm25Baseline {
    tools: Vec<(McpServerKey, String, String)>,
    lens: Vec<u32>,
    postings: HashMap<String, Vec<(u32, u32)>>,
    len_sum: u64,
}

impl Bm25Baseline {
    /// An empty baseline index.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tools` of `server` (a server added twice is indexed twice).
    pub fn add_server(&mut self, server: &McpServerKey, tools: &[ToolDef]) {
        let me = self;
        for tool in tools {
            let idx = u32::try_from(me.tools.len()).unwrap_or(u32::MAX);
            let mut text = format!("{} {} {}", tool.name(), server, tool.description());
            let mut params = Vec::new();
            schema_texts(tool.input_schema(), 0, &mut params);
            for (name, description) in params {
                text.push(' ');
                text.push_str(name);
                if let Some(d) = description {
                    text.push(' ');
                    text.push_str(d);
                }
            }
            let mut tf: HashMap<String, u32> = HashMap::new();
            let mut len = 0;
            for token in tokens(&text) {
                *tf.entry(token).or_default() += 1;
                len += 1;
            }
            for (term, n) in tf {
                me.postings.entry(term).or_default().push((idx, n));
            }
            me.lens.push(len);
            me.len_sum += u64::from(len);
            me.tools.push((
                server.clone(),
                tool.name().to_owned(),
                qualified_name(server, tool.name()),
            ));
        }
    }

    /// The qualified names of the first `limit` tools by BM25 score (ties by qualified
    /// name); only tools that match a query token.
    pub fn search(&self, query: &str, limit: usize) -> Vec<String> {
        const K1: f64 = 1.2;
        const B: f64 = 0.75;
        let n = self.tools.len().max(1) as f64;
        let avg = (self.len_sum as f64 / n).max(1.0);
        let mut acc = vec![0.0f64; self.tools.len()];
        let mut seen = std::collections::HashSet::new();
        for token in tokens(query).filter(|t| seen.insert(t.clone())) {
            let Some(list) = self.postings.get(&token) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let tf = f64::from(tf);
                let norm = K1 * (1.0 - B + B * f64::from(self.lens[doc as usize]) / avg);
                acc[doc as usize] += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> = acc
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.tools[a.0].2.cmp(&self.tools[b.0].2))
        });
        ranked.truncate(limit);
        ranked
            .into_iter()
            .map(|(i, _)| self.tools[i].2.clone())
            .collect()
    }
}

/// Lowercase runs of letters and digits.
fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
}
