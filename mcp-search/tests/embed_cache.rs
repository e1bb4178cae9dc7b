//! Embeddings are kept per tool: indexing a server again embeds only its tools whose text
//! changed, and never another server's tools.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_key::{McpServerKey, ServerName};
use mcp_search::{Embedder, Fusion, FusionMethod, SearchOptions, ToolDef, ToolIndex};

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(ServerName::new(name).unwrap())
}

/// Counts the texts it embeds and remembers them; vectors from letter counts.
#[derive(Debug, Default)]
struct Counting {
    texts: AtomicUsize,
    seen: Mutex<Vec<String>>,
}

impl Counting {
    /// The texts embedded since the last call, sorted.
    fn take(&self) -> Vec<String> {
        self.texts.store(0, Ordering::SeqCst);
        let mut seen = std::mem::take(&mut *self.seen.lock().unwrap());
        seen.sort();
        seen
    }
}

impl Embedder for Counting {
    fn embed(
        &self,
        texts: &[&str],
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error + Send + Sync>> {
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        self.seen
            .lock()
            .unwrap()
            .extend(texts.iter().map(|t| (*t).to_owned()));
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0; 26];
                for b in t.bytes().filter(u8::is_ascii_lowercase) {
                    v[usize::from(b - b'a')] += 1.0;
                }
                v
            })
            .collect())
    }
}

fn weather(forecast: &str) -> Vec<ToolDef> {
    vec![
        ToolDef::new("get_forecast", forecast),
        ToolDef::new("get_alerts", "Active weather alerts for a US state."),
    ]
}

fn files() -> Vec<ToolDef> {
    vec![
        ToolDef::new("read_file", "Read a file."),
        ToolDef::new("move_file", "Move or rename a file."),
        ToolDef::new("list_directory", "List a folder."),
    ]
}

#[test]
fn a_changed_server_re_embeds_only_its_changed_tools() {
    let counting = Arc::new(Counting::default());
    let mut index = ToolIndex::with_embedder(counting.clone());
    index
        .replace_server(key("weather"), weather("Forecast."))
        .unwrap();
    index.replace_server(key("files"), files()).unwrap();
    assert_eq!(counting.take().len(), 5);

    // One tool of one server changed: that tool alone is embedded again.
    index
        .replace_server(key("weather"), weather("Forecast for the next days."))
        .unwrap();
    assert_eq!(
        counting.take(),
        ["get_forecast. Forecast for the next days."]
    );
    // The same list again: nothing is embedded.
    index.replace_server(key("files"), files()).unwrap();
    assert!(counting.take().is_empty());
    // A new tool on a server: only it.
    let mut more = files();
    more.push(ToolDef::new("delete_file", "Delete a file."));
    index.replace_server(key("files"), more).unwrap();
    assert_eq!(counting.take(), ["delete_file. Delete a file."]);
    // A removed server comes back whole: its vectors went with it.
    assert!(index.remove_server(&key("weather")));
    index
        .replace_server(key("weather"), weather("Forecast."))
        .unwrap();
    assert_eq!(counting.take().len(), 2);
    // Changing the fusion embeds nothing, and the search still ranks.
    let index = index.with_fusion(
        Fusion::new()
            .with_method(FusionMethod::ScoreBlend)
            .with_embedding_weight(0.5),
    );
    let hits = index.search("delete_file", 3).unwrap();
    assert_eq!(hits[0].qualified_name(), "files/delete_file");
    // Only the query was embedded.
    assert_eq!(counting.take(), ["delete_file"]);
    assert_eq!(index.len(), 6);
}

#[test]
fn both_fusion_methods_rank_by_meaning_where_words_miss() {
    let tools = || {
        vec![
            ToolDef::new("one", "Handles alpha records."),
            ToolDef::new("two", "Handles beta records."),
        ]
    };
    // Vectors that put "zeta" next to "alpha" and nothing else.
    #[derive(Debug)]
    struct Near;
    impl Embedder for Near {
        fn embed(
            &self,
            texts: &[&str],
        ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error + Send + Sync>> {
            Ok(texts
                .iter()
                .map(|t| {
                    if t.contains("alpha") || t.contains("zeta") {
                        vec![1.0, 0.0]
                    } else {
                        vec![0.0, 1.0]
                    }
                })
                .collect())
        }
    }
    for fusion in [
        Fusion::new(),
        Fusion::static_model(),
        Fusion::new().with_rrf_k(5.0).with_embedding_weight(0.25),
    ] {
        let mut index = ToolIndex::with_embedder(Arc::new(Near)).with_fusion(fusion);
        index.replace_server(key("s"), tools()).unwrap();
        let hits = index.search("zeta", 5).unwrap();
        assert_eq!(hits[0].qualified_name(), "s/one", "{fusion:?}");
        // Found by meaning alone: no coverage, so the default minimum leaves it out.
        assert_eq!(hits[0].coverage(), 0.0);
        let strict = index.search_with("zeta", &SearchOptions::new(5)).unwrap();
        assert!(strict.is_no_match(), "{fusion:?}");
        let open = SearchOptions::new(5).with_min_coverage(0.0);
        let kept = index.search_with("zeta", &open).unwrap();
        assert_eq!(kept.hits[0].qualified_name(), "s/one", "{fusion:?}");
        // Lexical evidence still counts: "beta" names the other tool.
        let hits = index.search("beta records", 5).unwrap();
        assert_eq!(hits[0].qualified_name(), "s/two", "{fusion:?}");
    }
}
