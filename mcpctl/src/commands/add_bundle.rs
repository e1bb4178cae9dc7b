//! `mcpctl add` of an `mcpb` bundle: the downloaded archive (its SHA-256 already checked)
//! inspected in memory before consent (every entry a plain relative path, no symlinks,
//! bounded sizes, a valid `manifest.json`), and unpacked after consent into a folder of its
//! own under the data directory (`bundles/NAME-DIGEST`), from which the entry runs the
//! manifest's command.

use std::io::{Cursor, Read as _};
use std::path::{Path, PathBuf};

use mcp_catalog::{MCPB_MANIFEST_MAX_BYTES, McpbBundle, McpbManifest, ServerConfig};
use zip::ZipArchive;

use crate::error::CliError;

/// The most entries a bundle may have (a Node.js bundle carries its `node_modules`).
const MAX_ENTRIES: usize = 100_000;

/// The most bytes a bundle may unpack to, all entries together.
const MAX_UNPACKED_BYTES: u64 = 1024 * 1024 * 1024;

/// A checked bundle, ready to unpack once the person agrees.
pub(crate) struct Prepared {
    bytes: Vec<u8>,
    dir: PathBuf,
    files: usize,
    total: u64,
    config: ServerConfig,
}

impl Prepared {
    /// The configuration that runs the bundle from its folder.
    pub(crate) fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The review's line: what is unpacked where.
    pub(crate) fn review_line(&self) -> String {
        format!(
            "  unpack the bundle ({} files, {} bytes) into {}",
            self.files,
            self.total,
            self.dir.display()
        )
    }

    /// Unpacks into a fresh folder beside the target, then moves it in place (an older
    /// unpacking of the same bundle is replaced). On an error nothing is left.
    pub(crate) fn unpack(&self) -> Result<(), CliError> {
        let mut partial = self.dir.clone().into_os_string();
        partial.push(format!(".partial-{}", std::process::id()));
        let partial = PathBuf::from(partial);
        let _ = std::fs::remove_dir_all(&partial);
        let result = extract(&self.bytes, &partial).and_then(|()| {
            if self.dir.exists() {
                std::fs::remove_dir_all(&self.dir).map_err(|e| {
                    CliError::failure(format!(
                        "cannot replace the older unpacking `{}`: {e}",
                        self.dir.display()
                    ))
                })?;
            }
            std::fs::rename(&partial, &self.dir).map_err(|e| {
                CliError::failure(format!(
                    "cannot move the bundle into `{}`: {e}",
                    self.dir.display()
                ))
            })
        });
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&partial);
        }
        result
    }
}

/// Checks the archive and reads its manifest, writing nothing: the folder it will unpack
/// into and the configuration that runs it from there. `local` is the entry's name.
pub(crate) fn prepare(
    local: &str,
    bundle: &McpbBundle,
    description: Option<&str>,
    bytes: Vec<u8>,
) -> Result<Prepared, CliError> {
    let refused = |what: String| {
        CliError::failure(format!(
            "the bundle of `{local}` from {}: {what}",
            bundle.url()
        ))
        .with_hint("nothing was unpacked or written; ask the bundle's publisher")
    };
    let data = crate::host::auth::data_dir().ok_or_else(|| {
        CliError::usage("cannot find a directory to unpack the bundle into: HOME is not set")
            .with_hint("set MCPCTL_HOME or HOME")
    })?;
    let dir = data
        .join("bundles")
        .join(mcp_catalog::mcpb_folder_name(local, bundle.sha256()));
    let mut archive = ZipArchive::new(Cursor::new(bytes.as_slice()))
        .map_err(|e| refused(format!("not a zip archive ({e})")))?;
    let Entries {
        files,
        total,
        names,
    } = check_entries(&mut archive, &bytes).map_err(refused)?;
    let manifest_text = {
        let entry = archive
            .by_name("manifest.json")
            .map_err(|_| refused("it has no manifest.json at its top".to_owned()))?;
        let mut text = String::new();
        entry
            .take(MCPB_MANIFEST_MAX_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| refused(format!("its manifest.json cannot be read ({e})")))?;
        if text.len() as u64 > MCPB_MANIFEST_MAX_BYTES {
            return Err(refused(format!(
                "its manifest.json is larger than {MCPB_MANIFEST_MAX_BYTES} bytes"
            )));
        }
        text
    };
    let manifest =
        McpbManifest::from_json_str(&manifest_text).map_err(|e| refused(e.to_string()))?;
    if !names.contains(Path::new(manifest.entry_point())) {
        return Err(refused(format!(
            "its server.entry_point `{}` is not in the archive",
            manifest.entry_point()
        )));
    }
    let mut config = manifest
        .server_config(bundle, &dir)
        .map_err(|e| refused(e.to_string()))?;
    if let Some(description) = description {
        config = config.with_description(description.to_owned());
    }
    Ok(Prepared {
        bytes,
        dir,
        files,
        total,
        config,
    })
}

/// What [`check_entries`] found: the number of files, the bytes they unpack to, and the
/// path of every entry.
struct Entries {
    files: usize,
    total: u64,
    names: std::collections::BTreeSet<PathBuf>,
}

/// Checks every entry of `archive` (read from `bytes`) before anything is written: at
/// most [`MAX_ENTRIES`], each named once (after `./` and the like), each a plain relative
/// path, neither a symbolic link nor encrypted, all together declaring at most
/// [`MAX_UNPACKED_BYTES`] (what [`extract`] then holds each entry to). The error says what
/// is wrong.
fn check_entries(archive: &mut ZipArchive<Cursor<&[u8]>>, bytes: &[u8]) -> Result<Entries, String> {
    if archive.len() > MAX_ENTRIES {
        return Err(format!(
            "{} entries, more than the {MAX_ENTRIES} allowed",
            archive.len()
        ));
    }
    // The zip reader keeps one entry per name: a name listed twice would hide one of them
    // from this check while another unzipper unpacks it.
    let listed = listed_entries(bytes, archive.central_directory_start());
    if listed != archive.len() {
        return Err(format!(
            "its central directory lists {listed} entries under {} distinct names; a bundle \
             names each entry once",
            archive.len()
        ));
    }
    let mut total: u64 = 0;
    let mut files = 0;
    let mut names = std::collections::BTreeSet::new();
    for index in 0..archive.len() {
        let entry = archive
            .by_index_raw(index)
            .map_err(|e| format!("entry {index} cannot be read ({e})"))?;
        let name = entry.name().to_owned();
        let path = mcp_catalog::mcpb_entry_path(&name).map_err(|e| e.to_string())?;
        if names.contains(&path) {
            return Err(format!(
                "the entry `{}` unpacks to `{}`, as another entry does; a bundle names each \
                 entry once",
                name.escape_debug(),
                path.display()
            ));
        }
        if entry.is_symlink() {
            return Err(format!(
                "the entry `{name}` is a symbolic link; bundles may hold only files and folders"
            ));
        }
        if entry.encrypted() {
            return Err(format!("the entry `{name}` is encrypted"));
        }
        if !entry.is_dir() {
            files += 1;
            total = total.saturating_add(entry.size());
            if total > MAX_UNPACKED_BYTES {
                return Err(format!(
                    "it unpacks to more than {MAX_UNPACKED_BYTES} bytes"
                ));
            }
        }
        names.insert(path);
    }
    Ok(Entries {
        files,
        total,
        names,
    })
}

/// How many records the archive's central directory holds from `start` (where the zip
/// reader found it), names listed twice included: each record is its signature, 42 bytes
/// whose last lengths say how long its name, extra field and comment are, and those.
fn listed_entries(bytes: &[u8], start: u64) -> usize {
    const SIGNATURE: &[u8] = b"PK\x01\x02";
    const FIXED: usize = 46;
    let mut at = usize::try_from(start).unwrap_or(usize::MAX);
    let mut count = 0;
    while let Some(header) = at.checked_add(FIXED).and_then(|end| bytes.get(at..end)) {
        if !header.starts_with(SIGNATURE) {
            break;
        }
        let length = |offset: usize| {
            header
                .get(offset..offset + 2)
                .map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]])))
        };
        at = at.saturating_add(FIXED + length(28) + length(30) + length(32));
        count += 1;
    }
    count
}

/// Writes every entry of the (checked) archive under `dir`, each no larger than it
/// declared, keeping the owner's execute bit.
fn extract(bytes: &[u8], dir: &Path) -> Result<(), CliError> {
    let failed = |what: String| {
        CliError::failure(format!(
            "cannot unpack the bundle into `{}`: {what}",
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(|e| failed(e.to_string()))?;
    let mut archive = ZipArchive::new(Cursor::new(bytes)).map_err(|e| failed(e.to_string()))?;
    for index in 0..archive.len() {
        let entry = archive
            .by_index(index)
            .map_err(|e| failed(format!("entry {index}: {e}")))?;
        let name = entry.name().to_owned();
        let relative = mcp_catalog::mcpb_entry_path(&name).map_err(|e| failed(e.to_string()))?;
        if entry.is_symlink() {
            return Err(failed(format!("`{name}` is a symbolic link")));
        }
        let path = dir.join(relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| failed(format!("`{name}`: {e}")))?;
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| failed(format!("`{name}`: {e}")))?;
        }
        let declared = entry.size();
        let executable = entry.unix_mode().is_some_and(|mode| mode & 0o100 != 0);
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| failed(format!("`{name}`: {e}")))?;
        // At most one byte more than declared is read: an entry that inflates beyond its
        // size (a zip bomb whose directory lies) stops there.
        let written = std::io::copy(&mut entry.take(declared.saturating_add(1)), &mut out)
            .map_err(|e| failed(format!("`{name}`: {e}")))?;
        if written > declared {
            return Err(failed(format!(
                "`{name}` is larger than the {declared} bytes it declares"
            )));
        }
        if executable {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| failed(format!("`{name}`: {e}")))?;
        }
    }
    Ok(())
}
