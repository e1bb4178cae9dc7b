//! A temporary home/cache directory guard.

use std::path::{Path, PathBuf};

use crate::Error;

/// A temporary directory with `home/`, `cache/` and `config/` subdirectories, deleted
/// when dropped. Point `HOME`, `XDG_CACHE_HOME` and friends of a child process at it.
#[derive(Debug)]
pub struct TestHome {
    dir: tempfile::TempDir,
    home: PathBuf,
    cache: PathBuf,
    config: PathBuf,
}

impl TestHome {
    /// Create the directory tree under the system temp directory.
    ///
    /// # Errors
    /// [`Error::Io`] when the directories cannot be created.
    pub fn new() -> Result<Self, Error> {
        let io = |source| Error::Io {
            doing: "creating a temporary home directory",
            source,
        };
        let dir = tempfile::Builder::new()
            .prefix("mcp-testkit-")
            .tempdir()
            .map_err(io)?;
        let home = dir.path().join("home");
        let cache = dir.path().join("cache");
        let config = dir.path().join("config");
        for d in [&home, &cache, &config] {
            std::fs::create_dir_all(d).map_err(io)?;
        }
        Ok(Self {
            dir,
            home,
            cache,
            config,
        })
    }

    /// The root of the tree.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `<root>/home`.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// `<root>/cache`.
    pub fn cache(&self) -> &Path {
        &self.cache
    }

    /// `<root>/config`.
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// A path under the root (not created), e.g. `join("server.pid")`.
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Environment variables pointing a child process at this tree: `HOME`,
    /// `XDG_CACHE_HOME`, `XDG_CONFIG_HOME`.
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("HOME", self.home.clone()),
            ("XDG_CACHE_HOME", self.cache.clone()),
            ("XDG_CONFIG_HOME", self.config.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_exists_then_is_removed() {
        let home = TestHome::new().unwrap();
        let root = home.path().to_owned();
        assert!(home.home().is_dir() && home.cache().is_dir() && home.config().is_dir());
        drop(home);
        assert!(!root.exists());
    }
}
