//! The `semantic` feature's static-embedding model: loading a model folder (a tiny one
//! written here, and potion-base-8M when `scripts/semantic-model.sh` installed it) and
//! ranking by meaning where the words differ.
//!
//! The real model is read from `MCP_SEARCH_MODEL_DIR`, else the workspace's
//! `target/semantic-model/potion-base-8M`. Without it, the tests that need it print
//! "not run" and pass, unless `MCP_REQUIRE_SEMANTIC_MODEL=1`, which makes them fail.

#![cfg(feature = "semantic")]
#![allow(clippy::unwrap_used, clippy::print_stderr, reason = "tests")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_key::{McpServerKey, ServerName};
use mcp_search::{Embedder, Fusion, MODEL_DIR_ENV, StaticEmbedder, ToolDef, ToolIndex};
use serde_json::json;

/// The variable that makes a missing model a failure.
const REQUIRE: &str = "MCP_REQUIRE_SEMANTIC_MODEL";

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(ServerName::new(name).unwrap())
}

/// The installed model, or `None` (after saying "not run") when it is absent and not
/// required.
fn model(test: &str) -> Option<StaticEmbedder> {
    let dir = std::env::var_os(MODEL_DIR_ENV).map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/semantic-model/potion-base-8M"),
        PathBuf::from,
    );
    if !dir.join("model.safetensors").is_file() {
        assert!(
            std::env::var(REQUIRE).as_deref() != Ok("1"),
            "{test}: {REQUIRE}=1 but there is no model in {}: run scripts/semantic-model.sh",
            dir.display()
        );
        eprintln!(
            "{test}: not run: no model in {} (run scripts/semantic-model.sh, or set {MODEL_DIR_ENV})",
            dir.display()
        );
        return None;
    }
    Some(StaticEmbedder::from_dir(&dir).unwrap())
}

/// A folder of its own under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mcp-search-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a three-token model: `cat` and `kitten` point one way, `car` another.
fn tiny_model(dir: &Path, config: Option<serde_json::Value>) {
    let tokenizer = json!({
        "normalizer": {"type": "BertNormalizer", "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "vocab": {"[UNK]": 0, "cat": 1, "kitten": 2, "car": 3}}
    });
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let rows: [[f32; 2]; 4] = [[0.0, 0.0], [3.0, 0.0], [1.0, 0.0], [0.0, 2.0]];
    let data: Vec<u8> = rows
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let header =
        json!({"embeddings": {"dtype": "F32", "shape": [4, 2], "data_offsets": [0, data.len()]}})
            .to_string();
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    std::fs::write(dir.join("model.safetensors"), file).unwrap();
    if let Some(config) = config {
        std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    }
}

#[test]
fn a_model_folder_loads_and_embeds_the_mean_of_its_tokens() {
    let tmp = TempDir::new("tiny-model");
    tiny_model(&tmp.0, None);
    let model = StaticEmbedder::from_dir(&tmp.0).unwrap();
    assert_eq!(model.dim(), 2);
    // Normalized by default: the mean of (3, 0) and (0, 2) scaled to length 1.
    let v = model.embed_one("Cat CAR");
    let expected = [3.0 / 13f32.sqrt(), 2.0 / 13f32.sqrt()];
    assert!(
        (v[0] - expected[0]).abs() < 1e-6 && (v[1] - expected[1]).abs() < 1e-6,
        "{v:?}"
    );
    // Unknown words are left out; a text with no known token is the zero vector.
    assert_eq!(model.embed_one("cat dog"), [1.0, 0.0]);
    assert_eq!(model.embed_one("dog"), [0.0, 0.0]);
    assert_eq!(
        model.embed(&["", "car"]).unwrap(),
        [vec![0.0, 0.0], vec![0.0, 1.0]]
    );

    // config.json may keep the plain mean.
    tiny_model(&tmp.0, Some(json!({"normalize": false})));
    let model = StaticEmbedder::from_dir(&tmp.0).unwrap();
    assert_eq!(model.embed_one("cat car"), [1.5, 1.0]);

    // Meaning where words differ: "kitten" finds the tool about cats.
    let mut index = ToolIndex::with_embedder(Arc::new(model)).with_fusion(Fusion::static_model());
    index
        .replace_server(
            key("pets"),
            [
                ToolDef::new("feed", "Feed the cat."),
                ToolDef::new("drive", "Drive the car."),
            ],
        )
        .unwrap();
    assert_eq!(
        index.search("kitten", 5).unwrap()[0].qualified_name(),
        "pets/feed"
    );
}

#[test]
fn a_missing_or_wrong_model_is_an_error_that_says_what_to_do() {
    let tmp = TempDir::new("bad-model");
    let err = StaticEmbedder::from_dir(tmp.0.join("absent")).unwrap_err();
    assert!(err.is_model(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("absent")
            && text.contains("tokenizer.json")
            && text.contains("scripts/semantic-model.sh"),
        "{text}"
    );
    // A tokenizer with ids past the matrix's rows: the two files do not belong together.
    tiny_model(&tmp.0, None);
    let tokenizer = json!({"model": {"type": "WordPiece", "unk_token": "[UNK]",
                                      "vocab": {"[UNK]": 0, "far": 9}}});
    std::fs::write(tmp.0.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let err = StaticEmbedder::from_dir(&tmp.0).unwrap_err().to_string();
    assert!(
        err.contains("4 rows") && err.contains("different models"),
        "{err}"
    );
    // Another kind of tokenizer is refused by name.
    let bpe = json!({"model": {"type": "BPE", "vocab": {}, "unk_token": "[UNK]"}});
    std::fs::write(tmp.0.join("tokenizer.json"), bpe.to_string()).unwrap();
    let err = StaticEmbedder::from_dir(&tmp.0).unwrap_err().to_string();
    assert!(err.contains("\"BPE\""), "{err}");
}

#[test]
fn potion_base_8m_ranks_by_meaning_where_words_differ() {
    let Some(model) = model("potion_base_8m_ranks_by_meaning_where_words_differ") else {
        return;
    };
    assert_eq!(model.dim(), 256);
    let v = model.embed_one("rename a file");
    let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "{norm}");
    let tools = [
        ToolDef::new(
            "get_elevation",
            "Get the elevation data for a location on the earth.",
        ),
        ToolDef::new(
            "get_current_time",
            "Get the current time in a specific timezone.",
        ),
        ToolDef::new("send_email", "Send an email message to a recipient."),
        ToolDef::new(
            "entity_action",
            "Turn a Home Assistant entity on or off (lights, switches).",
        ),
    ];
    let embedder = Arc::new(model);
    let mut dense = ToolIndex::with_embedder(embedder.clone())
        .with_fusion(Fusion::new().with_embedding_weight(1e6));
    dense.replace_server(key("misc"), tools.clone()).unwrap();
    let mut lexical = ToolIndex::new();
    lexical.replace_server(key("misc"), tools).unwrap();
    // Queries sharing no word with their tool: the words find nothing, the model does.
    for (query, tool) in [
        ("how high above sea level is Denver", "misc/get_elevation"),
        ("what hour is it in Tokyo", "misc/get_current_time"),
        ("write to bob by mail", "misc/send_email"),
    ] {
        let words = lexical.search(query, 5).unwrap();
        assert!(
            words.iter().all(|h| h.qualified_name() != tool),
            "{query}: {words:?}"
        );
        let hits = dense.search(query, 5).unwrap();
        assert_eq!(hits[0].qualified_name(), tool, "{query}: {hits:?}");
    }
}
