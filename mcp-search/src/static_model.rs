//! A static-embedding model (model2vec-style) read from a local folder: the `semantic`
//! feature's [`Embedder`].

use std::path::{Path, PathBuf};

use crate::embed::Embedder;
use crate::error::SearchError;
use crate::wordpiece::WordPiece;

/// The environment variable that names a model folder (see [`StaticEmbedder::from_env`]).
pub const MODEL_DIR_ENV: &str = "MCP_SEARCH_MODEL_DIR";

/// At most this many tokens of a text count (model2vec's default `max_length`).
pub const MAX_TOKENS: usize = 512;

/// A static-embedding model: a text's vector is the mean of its tokens' rows of one
/// matrix, scaled to length 1 (model2vec's `StaticModel`, e.g. potion-base-8M). No network,
/// no download, no C or C++ code: it reads a folder the host put on disk.
///
/// The folder holds `model.safetensors` (one 2-D `F32` tensor, one row per token id;
/// named `embeddings` or the only tensor) and `tokenizer.json` (a WordPiece tokenizer with
/// the BERT normalizer and pre-tokenizer, as model2vec's English models have);
/// `config.json`, when present, may say `"normalize": false` to keep the mean unscaled.
/// The workspace's `scripts/semantic-model.sh` installs potion-base-8M into
/// `target/semantic-model/potion-base-8M/`.
///
/// Unknown words are left out, as model2vec leaves its unknown token out; a text with no
/// known token gets the zero vector, which ranks nothing. Embedding is pure computation
/// (no I/O). At most [`MAX_TOKENS`] tokens of a text count.
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_search::{StaticEmbedder, ToolIndex};
/// let model = StaticEmbedder::from_dir("target/semantic-model/potion-base-8M")?;
/// let index = ToolIndex::with_embedder(Arc::new(model));
/// # let _ = index;
/// # Ok::<(), mcp_search::SearchError>(())
/// ```
pub struct StaticEmbedder {
    tokenizer: WordPiece,
    /// Row-major, `rows × dim`.
    matrix: Vec<f32>,
    dim: usize,
    normalize: bool,
    dir: PathBuf,
}

impl std::fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticEmbedder")
            .field("dir", &self.dir)
            .field("rows", &(self.matrix.len() / self.dim.max(1)))
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

impl StaticEmbedder {
    /// Loads the model in `dir` (see the type's docs for the files).
    ///
    /// Errors ([`SearchError::is_model`]) name the folder and the file, and say what is
    /// missing or wrong.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Self, SearchError> {
        let dir = dir.as_ref().to_owned();
        let fail = |message: String| SearchError::Model {
            path: dir.clone(),
            message,
        };
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| {
                fail(format!(
                    "cannot read {name}: {e} (install the model with scripts/semantic-model.sh, \
                     or point {MODEL_DIR_ENV} at a model2vec folder)"
                ))
            })
        };
        let tokenizer_text = String::from_utf8(read("tokenizer.json")?)
            .map_err(|_| fail("tokenizer.json is not UTF-8".to_owned()))?;
        let tokenizer = WordPiece::from_json(&tokenizer_text).map_err(fail)?;
        let normalize = match std::fs::read(dir.join("config.json")) {
            Ok(bytes) => serde_json::from_slice::<serde_json::Value>(&bytes)
                .map_err(|e| fail(format!("config.json: {e}")))?
                .get("normalize")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
            Err(e) => return Err(fail(format!("cannot read config.json: {e}"))),
        };
        let (matrix, rows, dim) = read_matrix(&read("model.safetensors")?)
            .map_err(|m| fail(format!("model.safetensors: {m}")))?;
        let needed = tokenizer.vocab_len();
        if rows < needed {
            return Err(fail(format!(
                "model.safetensors has {rows} rows but tokenizer.json has token ids up to {}: \
                 the two files are from different models",
                needed.saturating_sub(1)
            )));
        }
        Ok(Self {
            tokenizer,
            matrix,
            dim,
            normalize,
            dir,
        })
    }

    /// Loads the model in the folder [`MODEL_DIR_ENV`] names, if it is set; else `None`.
    pub fn from_env() -> Option<Result<Self, SearchError>> {
        std::env::var_os(MODEL_DIR_ENV).map(Self::from_dir)
    }

    /// The length of every vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The heap bytes the model holds: the matrix (the tokenizer's vocabulary is not
    /// counted).
    pub fn heap_bytes(&self) -> usize {
        self.matrix.capacity() * size_of::<f32>()
    }

    /// The vector of one text.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut ids = Vec::new();
        self.tokenizer.encode(text, MAX_TOKENS, &mut ids);
        let mut sum = vec![0.0f32; self.dim];
        for &id in &ids {
            let start = usize::try_from(id)
                .unwrap_or(usize::MAX)
                .saturating_mul(self.dim);
            if let Some(row) = self.matrix.get(start..start + self.dim) {
                for (s, x) in sum.iter_mut().zip(row) {
                    *s += x;
                }
            }
        }
        let scale = if self.normalize {
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 { 1.0 / norm } else { 0.0 }
        } else if ids.is_empty() {
            0.0
        } else {
            1.0 / ids.len() as f32
        };
        for s in &mut sum {
            *s *= scale;
        }
        sum
    }
}

impl Embedder for StaticEmbedder {
    fn embed(
        &self,
        texts: &[&str],
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error + Send + Sync>> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

/// The one matrix of a safetensors file: (values row-major, rows, columns). The format: an
/// 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and
/// byte range, then the bytes.
fn read_matrix(bytes: &[u8]) -> Result<(Vec<f32>, usize, usize), String> {
    let head = bytes
        .get(..8)
        .ok_or("shorter than its 8-byte header length")?;
    let mut len = [0u8; 8];
    len.copy_from_slice(head);
    let header_len = usize::try_from(u64::from_le_bytes(len)).map_err(|_| "header too long")?;
    let header = bytes
        .get(8..8usize.saturating_add(header_len))
        .ok_or("the header runs past the end of the file")?;
    let data = &bytes[8 + header_len..];
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(header).map_err(|e| format!("header: {e}"))?;
    let tensors: Vec<(&String, &serde_json::Value)> = header
        .iter()
        .filter(|(k, _)| *k != "__metadata__")
        .collect();
    let (name, tensor) = match tensors.iter().find(|(k, _)| *k == "embeddings") {
        Some(t) => *t,
        None => match tensors.as_slice() {
            [only] => *only,
            _ => {
                return Err(format!(
                    "{} tensors and none named \"embeddings\"",
                    tensors.len()
                ));
            }
        },
    };
    let dtype = tensor.get("dtype").and_then(serde_json::Value::as_str);
    if dtype != Some("F32") {
        return Err(format!(
            "tensor {name:?} is {dtype:?}; only F32 is supported"
        ));
    }
    let dims: Vec<usize> = unsigned_list(tensor, "shape");
    let [rows, dim] = dims[..] else {
        return Err(format!(
            "tensor {name:?} has shape {dims:?}; a 2-D matrix is needed"
        ));
    };
    let offsets: Vec<usize> = unsigned_list(tensor, "data_offsets");
    let [begin, end] = offsets[..] else {
        return Err(format!("tensor {name:?} has no data_offsets"));
    };
    let raw = data
        .get(begin..end)
        .ok_or_else(|| format!("tensor {name:?}'s bytes run past the end of the file"))?;
    if dim == 0 || raw.len() != rows.saturating_mul(dim).saturating_mul(4) {
        return Err(format!(
            "tensor {name:?} has {} bytes for shape [{rows}, {dim}] of F32",
            raw.len()
        ));
    }
    let matrix = raw
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok((matrix, rows, dim))
}

/// A tensor header's array of unsigned integers under `key` (its shape or its byte range);
/// empty when missing, non-numbers left out (the callers then refuse the count).
fn unsigned_list(tensor: &serde_json::Value, key: &str) -> Vec<usize> {
    tensor
        .get(key)
        .and_then(serde_json::Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(serde_json::Value::as_u64)
                .filter_map(|d| usize::try_from(d).ok())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safetensors(header: &serde_json::Value, data: &[u8]) -> Vec<u8> {
        let header = header.to_string();
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_one_f32_matrix_and_refuses_the_rest_by_name() {
        let data: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let ok = serde_json::json!({"embeddings": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 24]}});
        let (m, rows, dim) = read_matrix(&safetensors(&ok, &data)).unwrap();
        assert_eq!((m, rows, dim), (vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3, 2));
        let f16 = serde_json::json!({"embeddings": {"dtype": "F16", "shape": [3, 2], "data_offsets": [0, 12]}});
        let err = read_matrix(&safetensors(&f16, &data)).unwrap_err();
        assert!(err.contains("only F32"), "{err}");
        let short = serde_json::json!({"embeddings": {"dtype": "F32", "shape": [4, 2], "data_offsets": [0, 24]}});
        let err = read_matrix(&safetensors(&short, &data)).unwrap_err();
        assert!(err.contains("24 bytes for shape [4, 2]"), "{err}");
        assert!(read_matrix(&[1, 2]).unwrap_err().contains("8-byte"));
    }
}
