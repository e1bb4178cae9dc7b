//! Owner-only files and directories (0600 / 0700 on Unix).

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::Path;

use super::StoreError;

/// Mode bits that give anyone but the owner access.
#[cfg(unix)]
const GROUP_OTHER: u32 = 0o077;

/// Creates `dir` and missing parents, each owner-only. An existing directory is left alone.
pub(crate) fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| StoreError::io("create the credential directory", dir, e))
}

/// Makes an existing directory owner-only if it is not already.
pub(crate) fn restrict_dir(dir: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta =
            fs::metadata(dir).map_err(|e| StoreError::io("inspect the directory", dir, e))?;
        if meta.permissions().mode() & GROUP_OTHER != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(|e| StoreError::io("restrict the permissions of", dir, e))?;
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Warns (without changing anything) when a directory the host owns lets other users
/// replace files in it.
pub(crate) fn warn_if_dir_writable_by_others(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = fs::metadata(dir) {
            let mode = meta.permissions().mode();
            if mode & 0o022 != 0 {
                tracing::warn!(
                    directory = %dir.display(),
                    mode = format_args!("{:o}", mode & 0o777),
                    "the credential directory is writable by other users; restrict it (chmod 700)"
                );
            }
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Makes an open credential file owner-only (0600), with a warning when it was not.
pub(crate) fn restrict_file(file: &File, path: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = file
            .metadata()
            .map_err(|e| StoreError::io("inspect the credential file", path, e))?;
        let mode = meta.permissions().mode();
        if mode & GROUP_OTHER != 0 {
            file.set_permissions(fs::Permissions::from_mode(0o600))
                .map_err(|e| StoreError::io("restrict the permissions of", path, e))?;
            tracing::warn!(
                file = %path.display(),
                mode = format_args!("{:o}", mode & 0o777),
                "the credential file was readable by other users; restricted it to 0600"
            );
        }
    }
    #[cfg(not(unix))]
    let _ = (file, path);
    Ok(())
}

/// Options that create an owner-only (0600) file.
pub(crate) fn private_file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// The directory holding `path` (`.` for a bare file name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Flushes a directory entry change (a rename) to disk where the platform allows it.
pub(crate) fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Err(err) = File::open(dir).and_then(|d| d.sync_all()) {
        // Some file systems cannot fsync a directory; the rename itself already happened.
        tracing::debug!(directory = %dir.display(), error = %err, "could not sync directory");
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// True for "no such file".
pub(crate) fn is_not_found(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::NotFound
}
