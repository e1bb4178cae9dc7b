//! Owner-only files and directories (0600 / 0700 on Unix), and the checks that refuse
//! anything else.
//!
//! Like ssh with `~/.ssh`: the credential file, the lock directory and the lock files are
//! never followed through a symbolic link (`O_NOFOLLOW`, `symlink_metadata`), must be owned
//! by the current (effective) user, and must not be open to other users. Such a path is
//! refused with [`StoreError::Insecure`] (naming it and saying what to do), never changed
//! behind the user's back. The data directory belongs to the host: it may be a symlink and
//! may be owned by root, but not by another user; one writable by others gets a warning.

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use super::StoreError;

/// Mode bits that give anyone but the owner access.
#[cfg(unix)]
const GROUP_OTHER: u32 = 0o077;
/// Mode bits that let anyone but the owner change a directory's entries.
#[cfg(unix)]
const GROUP_OTHER_WRITE: u32 = 0o022;

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

/// Checks the host's data directory if it exists (`Ok(false)` when it does not): it must
/// be a directory owned by the current user or root; one writable by other users gets a
/// warning (the host owns it, so it is not changed).
pub(crate) fn check_data_dir(dir: &Path) -> Result<bool, StoreError> {
    let meta = match fs::metadata(dir) {
        Ok(meta) => meta,
        Err(err) if is_not_found(&err) => return Ok(false),
        Err(err) => return Err(StoreError::io("inspect the credential directory", dir, err)),
    };
    if !meta.is_dir() {
        return Err(StoreError::insecure(
            "the credential directory",
            dir,
            "it is not a directory",
            "remove it or choose another credential file location",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        check_owner(
            "the credential directory",
            dir,
            meta.uid(),
            current_uid(),
            true,
        )?;
        let mode = meta.mode();
        if mode & GROUP_OTHER_WRITE != 0 {
            tracing::warn!(
                target: crate::SECURITY_LOG_TARGET,
                "the credential directory {0} (mode {1:o}) is writable by other users; \
                 restrict it: chmod 700 {0}",
                dir.display(),
                mode & 0o777
            );
        }
    }
    Ok(true)
}

/// An open, checked lock directory. Lock files are opened relative to this handle
/// (`openat`), so the directory cannot be swapped for a symlink between the check and the
/// open.
#[derive(Debug)]
pub(crate) struct LockDir {
    path: PathBuf,
    #[cfg(unix)]
    handle: File,
}

impl LockDir {
    const WHAT: &'static str = "the credential lock directory";

    /// Opens `dir`, creating it (0700, with missing parents) when missing, and refuses a
    /// symlink, a non-directory, another user's directory or one writable by other users.
    pub(crate) fn open(dir: &Path) -> Result<Self, StoreError> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let handle = match open_dir_no_follow(dir) {
                Ok(handle) => handle,
                Err(err) if is_not_found(&err) => {
                    create_private_dir(dir)?;
                    open_dir_no_follow(dir).map_err(|e| Self::open_error(dir, e))?
                }
                Err(err) => return Err(Self::open_error(dir, err)),
            };
            let meta = handle
                .metadata()
                .map_err(|e| StoreError::io("inspect", dir, e))?;
            check_owner(Self::WHAT, dir, meta.uid(), current_uid(), false)?;
            let mode = meta.mode();
            if mode & GROUP_OTHER_WRITE != 0 {
                return Err(StoreError::insecure(
                    Self::WHAT,
                    dir,
                    format!("its mode {:o} lets other users change it", mode & 0o777),
                    format!("run `chmod 700 {}`", dir.display()),
                ));
            }
            Ok(Self {
                path: dir.to_owned(),
                handle,
            })
        }
        #[cfg(not(unix))]
        {
            if let Err(err) = fs::symlink_metadata(dir) {
                if !is_not_found(&err) {
                    return Err(StoreError::io("inspect", dir, err));
                }
                create_private_dir(dir)?;
            }
            match fs::symlink_metadata(dir) {
                Ok(meta) if meta.is_dir() => Ok(Self {
                    path: dir.to_owned(),
                }),
                Ok(_) => Err(Self::open_error(dir, io::ErrorKind::Other.into())),
                Err(err) => Err(StoreError::io("inspect", dir, err)),
            }
        }
    }

    /// The directory's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens or creates (0600) the lock file `name` in this directory, never through a
    /// symlink, and refuses one owned by another user.
    pub(crate) fn open_file(&self, name: &OsStr) -> Result<File, StoreError> {
        let path = self.path.join(name);
        #[cfg(unix)]
        let opened = {
            use nix::fcntl::{OFlag, openat};
            use nix::sys::stat::Mode;
            openat(
                &self.handle,
                name,
                OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                Mode::S_IRUSR | Mode::S_IWUSR,
            )
            .map(File::from)
            .map_err(io::Error::from)
        };
        #[cfg(not(unix))]
        let opened = private_file_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path);
        let file = opened
            .map_err(|e| open_error("the credential lock file", "open the lock file", &path, e))?;
        check_lock_file(&file, &path)?;
        Ok(file)
    }

    /// A failed open of the directory: a symlink or a non-directory is refused as unsafe.
    fn open_error(dir: &Path, err: io::Error) -> StoreError {
        match fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => StoreError::insecure(
                Self::WHAT,
                dir,
                "it is a symbolic link",
                "remove the symlink (the directory is created again on the next use)",
            ),
            Ok(meta) if !meta.is_dir() => StoreError::insecure(
                Self::WHAT,
                dir,
                "it is not a directory",
                "remove it (the directory is created again on the next use)",
            ),
            _ => StoreError::io("open the lock directory", dir, err),
        }
    }
}

/// Opens a directory for `openat`, failing on a symlink (`O_NOFOLLOW`) or a non-directory
/// (`O_DIRECTORY`).
#[cfg(unix)]
fn open_dir_no_follow(dir: &Path) -> io::Result<File> {
    use nix::fcntl::OFlag;
    let mut options = OpenOptions::new();
    options.read(true);
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        (OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW).bits(),
    );
    options.open(dir)
}

/// Opens the credential file for reading without following a symlink; check it with
/// [`check_private_file`]. `O_NONBLOCK` keeps a planted FIFO from blocking the open (it is
/// then refused as not a regular file); reads of a regular file ignore the flag.
pub(crate) fn open_credential_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        (nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK).bits(),
    );
    options.open(path)
}

/// Refuses an open credential file that is not a regular file, belongs to another user,
/// or is open to other users (mode & 077). Nothing is changed.
pub(crate) fn check_private_file(file: &File, path: &Path) -> Result<(), StoreError> {
    const WHAT: &str = "the credential file";
    let meta = file
        .metadata()
        .map_err(|e| StoreError::io("inspect the credential file", path, e))?;
    if !meta.is_file() {
        return Err(StoreError::insecure(
            WHAT,
            path,
            "it is not a regular file",
            "remove it and log in again",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        check_owner(WHAT, path, meta.uid(), current_uid(), false)?;
        let mode = meta.mode();
        if mode & GROUP_OTHER != 0 {
            return Err(StoreError::insecure(
                WHAT,
                path,
                format!(
                    "its mode {:o} lets other users read or change it",
                    mode & 0o777
                ),
                format!(
                    "run `chmod 600 {}` (and consider its tokens leaked: log out and log in \
                     again)",
                    path.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses an open lock file owned by another user.
fn check_lock_file(file: &File, path: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = file
            .metadata()
            .map_err(|e| StoreError::io("inspect the lock file", path, e))?;
        check_owner(
            "the credential lock file",
            path,
            meta.uid(),
            current_uid(),
            false,
        )?;
    }
    #[cfg(not(unix))]
    let _ = (file, path);
    Ok(())
}

/// Turns a failed no-follow open of `path` into [`StoreError::Insecure`] when `path` is a
/// symbolic link (dangling or not), else into [`StoreError::Io`].
pub(crate) fn open_error(
    what: &'static str,
    action: &'static str,
    path: &Path,
    err: io::Error,
) -> StoreError {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return StoreError::insecure(
            what,
            path,
            "it is a symbolic link",
            "remove the symlink (credentials and locks are never read or written through one)",
        );
    }
    StoreError::io(action, path, err)
}

/// The owner check: `owner` must be `expected` (or root, when `root_ok`).
#[cfg(unix)]
pub(crate) fn check_owner(
    what: &'static str,
    path: &Path,
    owner: u32,
    expected: u32,
    root_ok: bool,
) -> Result<(), StoreError> {
    if owner == expected || (root_ok && owner == 0) {
        return Ok(());
    }
    Err(StoreError::insecure(
        what,
        path,
        format!("it is owned by uid {owner}, not by the current user (uid {expected})"),
        "remove it, or give it to the current user (chown) if it really is yours",
    ))
}

/// The effective user id: the owner of files this process creates.
#[cfg(unix)]
fn current_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Options that create an owner-only (0600) file and never follow a symlink at `path`.
pub(crate) fn private_file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    no_follow(&mut options);
    options
}

/// Makes `open` fail (`ELOOP`) instead of following a symlink in the last component.
fn no_follow(options: &mut OpenOptions) {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(options, nix::fcntl::OFlag::O_NOFOLLOW.bits());
    #[cfg(not(unix))]
    let _ = options;
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn another_users_path_is_refused_with_what_to_do() {
        let path = Path::new("/data/credentials.json");
        let err = check_owner("the credential file", path, 1001, 1000, false).unwrap_err();
        assert!(err.is_insecure());
        assert_eq!(
            err.to_string(),
            "refusing to use the credential file /data/credentials.json: it is owned by uid \
             1001, not by the current user (uid 1000); remove it, or give it to the current \
             user (chown) if it really is yours"
        );
        check_owner("the credential file", path, 1000, 1000, false).unwrap();
    }

    #[test]
    fn root_may_own_only_the_data_directory() {
        let dir = Path::new("/data");
        check_owner("the credential directory", dir, 0, 1000, true).unwrap();
        assert!(
            check_owner("the credential lock directory", dir, 0, 1000, false)
                .unwrap_err()
                .is_insecure()
        );
        assert!(
            check_owner("the credential directory", dir, 1001, 1000, true)
                .unwrap_err()
                .is_insecure()
        );
    }
}
