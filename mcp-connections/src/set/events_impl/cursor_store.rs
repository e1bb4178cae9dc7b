//! Where a host keeps a feed's cursor across its own restarts ([`CursorStore`]), and the
//! store most hosts need: one small file, replaced atomically ([`FileCursorStore`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Keeps the cursor of one subscription for a host that restarts
/// ([`super::EventFeedOptions::persist_cursor`]): the feed stores the cursor after each
/// item the host has dealt with, and a feed made with the same store and no
/// [`super::EventFeedOptions::resume_from`] starts from the cursor it loads.
///
/// Both methods are called on the host's task (from [`super::EventFeed::next`] and
/// [`crate::ConnectionSet::subscribe_events`]): keep them quick.
pub trait CursorStore: Send + Sync + std::fmt::Debug {
    /// The cursor kept, `None` when none was stored yet.
    ///
    /// # Errors
    /// When the kept cursor cannot be read.
    fn load(&self) -> std::io::Result<Option<String>>;

    /// Keeps `cursor` in place of the one kept.
    ///
    /// # Errors
    /// When it cannot be kept; the feed logs it and goes on (the next item stores again).
    fn store(&self, cursor: &str) -> std::io::Result<()>;
}

/// A [`CursorStore`] in one file holding the cursor alone. Each store writes a temporary
/// file of its own beside it, flushes it to disk and renames it over the file, so the file
/// holds either the old cursor or the new one, never a part of one, whenever the host
/// stops, and whoever else stores into the same file at the same time (the last store
/// wins).
#[derive(Debug, Clone)]
pub struct FileCursorStore {
    path: PathBuf,
}

impl FileCursorStore {
    /// A store in the file `path` (created on the first store; its folder must exist).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary file a store writes before renaming it over [`Self::path`]: one
    /// name per process and store, so two stores into the same file never write into one
    /// temporary file.
    fn temporary(&self) -> PathBuf {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        name.push(format!(".{}.{n}.tmp", std::process::id()));
        self.path.with_file_name(name)
    }
}

impl CursorStore for FileCursorStore {
    fn load(&self) -> std::io::Result<Option<String>> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => {
                let cursor = text.trim();
                Ok((!cursor.is_empty()).then(|| cursor.to_owned()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(std::io::Error::new(
                e.kind(),
                format!("reading {}: {e}", self.path.display()),
            )),
        }
    }

    fn store(&self, cursor: &str) -> std::io::Result<()> {
        let temporary = self.temporary();
        let written = (|| {
            let mut file = std::fs::File::create(&temporary)?;
            file.write_all(cursor.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&temporary, &self.path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written.map_err(|e| {
            std::io::Error::new(e.kind(), format!("writing {}: {e}", self.path.display()))
        })
    }
}
