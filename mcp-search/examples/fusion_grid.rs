//! How the semantic layer's fusion constants were chosen: top-1 / top-5 on the TUNING part
//! of the public queries only (never the held-out part, never the independent set) for a
//! grid of [`Fusion`] settings, beside the lexical ranking.
//!
//! ```text
//! scripts/semantic-model.sh
//! cargo run --release -p mcp-search --features semantic --example fusion_grid
//! ```
//!
//! The model folder is `MCP_SEARCH_MODEL_DIR`, else the workspace's
//! `target/semantic-model/potion-base-8M`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_search::{Catalog, Fusion, FusionMethod, LabelledQuery, StaticEmbedder, ToolIndex};

#[expect(clippy::print_stdout, reason = "an example that prints a table")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = here.join("data/tool-search");
    let dir = std::env::var_os("MCP_SEARCH_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| here.join("../target/semantic-model/potion-base-8M"));
    let catalog = Catalog::from_path(data.join("catalog.json"))?;
    let tuning: Vec<LabelledQuery> =
        LabelledQuery::list_from_path(data.join("queries-public.json"))?
            .into_iter()
            .filter(|q| !q.is_held_out())
            .collect();
    let model = Arc::new(StaticEmbedder::from_dir(&dir)?);
    let mut index = ToolIndex::with_embedder(model.clone());
    catalog.index_into(&mut index)?;
    let lexical = catalog.to_index()?;
    let score = |index: &ToolIndex| -> Result<(usize, usize), mcp_search::SearchError> {
        let (mut top1, mut top5) = (0, 0);
        for q in &tuning {
            let ranked: Vec<String> = index
                .search(&q.query, 5)?
                .iter()
                .map(|h| h.qualified_name().to_owned())
                .collect();
            top1 += usize::from(q.hit_at(&ranked, 1));
            top5 += usize::from(q.hit_at(&ranked, 5));
        }
        Ok((top1, top5))
    };
    let n = tuning.len() as f64;
    let pct = |x: usize| 100.0 * x as f64 / n;
    let (t1, t5) = score(&lexical)?;
    println!("tuning part, {} queries", tuning.len());
    println!("| fusion | top-1 | top-5 |");
    println!("| --- | ---: | ---: |");
    println!("| lexical only | {:.1} % | {:.1} % |", pct(t1), pct(t5));
    let only = index
        .clone()
        .with_fusion(Fusion::new().with_rrf_k(60.0).with_embedding_weight(1e6));
    let (t1, t5) = score(&only)?;
    println!("| embedding only | {:.1} % | {:.1} % |", pct(t1), pct(t5));
    for k in [5.0, 20.0, 60.0] {
        for w in [0.1, 0.25, 0.5] {
            let fused = index
                .clone()
                .with_fusion(Fusion::new().with_rrf_k(k).with_embedding_weight(w));
            let (t1, t5) = score(&fused)?;
            println!(
                "| k {k}, weight {w} | {:.1} % | {:.1} % |",
                pct(t1),
                pct(t5)
            );
        }
    }
    for w in [0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5] {
        let fused = index.clone().with_fusion(
            Fusion::new()
                .with_method(FusionMethod::ScoreBlend)
                .with_embedding_weight(w),
        );
        let (t1, t5) = score(&fused)?;
        println!(
            "| score blend, weight {w} | {:.1} % | {:.1} % |",
            pct(t1),
            pct(t5)
        );
    }
    Ok(())
}
