//! `mcpctl add NAME[@VERSION]`: a server of the MCP Registry written into a configuration
//! file, pinned. It shows what the entry will run or connect to, in the trust review's
//! form (and, for a server added before, what changes), asks for the inputs it needs
//! (on a terminal, a secret is read without echo and, after consent, kept in the
//! credential store under a name bound to the server: the file holds only a reference,
//! `${secret:NAME}`, resolved when the server starts; a secret not given is read from the
//! environment variable it names), and writes only after consent: a "yes" on a terminal,
//! or `--yes`. Nothing is run or downloaded to
//! run before that: an `mcpb` bundle is downloaded and checked (its SHA-256, its entries,
//! its `manifest.json`) before, and unpacked into the data directory only after consent
//! (`add_bundle`); the entry runs the manifest's command from there.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use mcp_catalog::{InputValues, InstallTarget, PackageType, RegistryInput, RegistryServer};
use mcp_registry::EntryStatus;
use serde_json::json;

use crate::cli::{AddArgs, AddScope, GlobalArgs};
use crate::commands::search_registry::{client, registry_error};
use crate::commands::{add_bundle, add_entry};
use crate::error::CliError;
use crate::term::render::terminal_safe;

/// Runs `add`: exit code 0 once written, 1 when the person said no.
pub(crate) async fn run(global: &GlobalArgs, args: &AddArgs) -> Result<u8, CliError> {
    let (name, version) = match args.name.rsplit_once('@') {
        Some((name, version)) => (name, Some(version)),
        None => (args.name.as_str(), None),
    };
    let server_name = local_name(name, args.local_name.as_deref())?;
    let local = server_name.to_string();
    let file = target_file(global, args.scope)?;
    let registry = client(&args.registry)?;
    let fetched = registry
        .fetch(name, version)
        .await
        .map_err(|e| registry_error(&e))?;
    let server = &fetched.server;
    let target = choose_target(server, args.using.as_deref())?;
    let interactive = std::io::stdin().is_terminal() && !global.json;
    let values = answers(server, target, &args.values, interactive)?;
    let plan = server.install_plan(target, &values).map_err(|errors| {
        CliError::usage(format!(
            "cannot configure {name} {} from {}",
            server.version(),
            fetched.url
        ))
        .with_details(errors.iter().map(ToString::to_string).collect())
        .with_hint("give the inputs it needs with --set NAME=VALUE")
    })?;
    let stored = ask_secrets(&plan, interactive);
    let plan = plan.with_stored_secrets(
        &stored
            .iter()
            .map(|(variable, _)| variable.as_str())
            .collect::<Vec<_>>(),
    );
    let bundle = prepared_bundle(&registry, &plan, &local, server.description()).await?;
    let Some(config) = bundle
        .as_ref()
        .map(add_bundle::Prepared::config)
        .or_else(|| plan.server_config())
    else {
        return Err(CliError::failure(
            "the registry entry planned nothing to run",
        ));
    };
    let provenance = plan.provenance();
    let entry = add_entry::entry_toml(&server_name, config, provenance);
    let review = review_of(&entry)?;
    let old_text = std::fs::read_to_string(&file).unwrap_or_default();
    let replaces = old_text.lines().any(|l| {
        let l = l.trim();
        l == format!("[mcp_servers.{local}]") || l == format!("[mcp_servers.\"{local}\"]")
    });
    let before = mcp_catalog::Provenance::recorded(&file, &local);
    let secrets: Vec<&RegistryInput> = plan.inputs().iter().filter(|i| i.secret).collect();

    if global.json {
        // Nothing is asked with --json: it writes only with --yes.
        if !args.yes {
            return Err(
                CliError::usage("`mcpctl add --json` writes nothing without --yes")
                    .with_hint("review with `mcpctl add` on a terminal, or pass --yes"),
            );
        }
    } else {
        let text = review_text(&Review {
            fetched: &fetched,
            base_url: registry.base_url(),
            provenance,
            replaces,
            before: before.as_ref(),
            local: &local,
            file: &file,
            review: &review,
            secrets: &secrets,
            stored: &stored,
            unpack: bundle.as_ref().map(add_bundle::Prepared::review_line),
        });
        eprint!("{}", terminal_safe(&text));
        if !args.yes && !consented(interactive, &file)? {
            eprintln!("nothing was written");
            return Ok(1);
        }
    }
    if let Some(bundle) = &bundle {
        bundle.unpack()?;
    }
    store_secrets(&file, &server_name, &stored).await?;
    write(&file, &old_text, &server_name, &entry)?;
    provenance
        .record(&file, &local, registry.base_url())
        .map_err(|e| CliError::failure(format!("cannot record where `{local}` came from: {e}")))?;
    report_added(global, &local, &file, provenance, &review);
    Ok(0)
}

/// An `mcpb` plan's bundle downloaded, checked against its pinned SHA-256 and inspected
/// (nothing unpacked yet); `None` for the other package types.
async fn prepared_bundle(
    registry: &mcp_registry::RegistryClient,
    plan: &mcp_catalog::InstallPlan,
    local: &str,
    description: Option<&str>,
) -> Result<Option<add_bundle::Prepared>, CliError> {
    let Some(bundle) = plan.bundle() else {
        return Ok(None);
    };
    let bytes = registry
        .download_bundle(bundle)
        .await
        .map_err(|e| registry_error(&e))?;
    add_bundle::prepare(local, bundle, description, bytes).map(Some)
}

/// What the review before consent shows.
struct Review<'a> {
    fetched: &'a mcp_registry::FetchedServer,
    base_url: &'a str,
    provenance: &'a mcp_catalog::Provenance,
    replaces: bool,
    before: Option<&'a mcp_catalog::Provenance>,
    local: &'a str,
    file: &'a Path,
    review: &'a mcp_catalog::Review,
    secrets: &'a [&'a RegistryInput],
    stored: &'a [(String, mcp_key::Secret)],
    /// For a bundle, where it is unpacked.
    unpack: Option<String>,
}

/// The lines shown before asking: the entry and its pin, a deprecation, what changes for
/// an entry added before, what it will run or connect to, the secrets' variables and
/// where it is written.
fn review_text(r: &Review<'_>) -> String {
    let mut text = format!(
        "{} {} from {}\n",
        r.fetched.server.name(),
        r.fetched.server.version(),
        r.base_url
    );
    if r.fetched.summary.status == EntryStatus::Deprecated {
        let why = r
            .fetched
            .summary
            .status_message
            .as_deref()
            .unwrap_or("no reason given");
        text.push_str(&format!("  deprecated in the registry: {why}\n"));
    }
    text.push_str(&format!("pinned: {}\n", r.provenance));
    if r.replaces {
        text.push_str(&format!(
            "replaces the entry `{}` in {}:\n",
            r.local,
            r.file.display()
        ));
        match r.before {
            Some(before) => {
                let changes = before.changes_to(r.provenance);
                if changes.is_empty() {
                    text.push_str("  the same version as now\n");
                }
                for change in changes {
                    text.push_str(&format!("  {change}\n"));
                }
            }
            None => text.push_str("  (the entry there was not added from the registry)\n"),
        }
    }
    text.push_str("it will:\n");
    if let Some(unpack) = &r.unpack {
        text.push_str(unpack);
        text.push('\n');
    }
    for line in crate::host::trust::review_lines(r.review) {
        text.push_str(&line);
        text.push('\n');
    }
    for secret in r.secrets {
        let Some(variable) = &secret.variable else {
            continue;
        };
        if r.stored.iter().any(|(v, _)| v == variable) {
            text.push_str(&format!(
                "  keep {variable} in the credential store for `{}`: {} (secret; the file \
                 holds only {})\n",
                r.local,
                secret.description,
                RegistryInput::secret_reference(variable)
            ));
        } else {
            text.push_str(&format!(
                "  set {variable} before starting it: {} (secret; never written to the file)\n",
                secret.description
            ));
        }
    }
    text.push_str(&format!(
        "writes [mcp_servers.{}] to {}\n",
        r.local,
        r.file.display()
    ));
    text
}

/// Whether the person agreed on the terminal (never without one).
fn consented(interactive: bool, file: &Path) -> Result<bool, CliError> {
    if !interactive {
        return Err(CliError::usage(
            "stdin is not a terminal, so nobody agreed; nothing was written",
        )
        .with_hint("run it on a terminal, or pass --yes after reviewing the lines above"));
    }
    let answer =
        crate::term::elicit::read_line(&format!("write it to {}? [y]es / [N]o: ", file.display()));
    Ok(answer.is_some_and(|a| a.eq_ignore_ascii_case("y") || a.eq_ignore_ascii_case("yes")))
}

/// Says what was added (JSON with `--json`).
fn report_added(
    global: &GlobalArgs,
    local: &str,
    file: &Path,
    provenance: &mcp_catalog::Provenance,
    review: &mcp_catalog::Review,
) {
    if global.json {
        crate::term::render::out_json(&json!({
            "added": local,
            "file": file.display().to_string(),
            "provenance": provenance.to_json(),
            "review": review.to_string().lines().collect::<Vec<_>>(),
        }));
    } else {
        crate::term::render::out(&format!(
            "added `{local}` ({}) to {}\n",
            provenance,
            file.display()
        ));
    }
}

/// The entry's name in the configuration: `--as`, else the part after the last `/`.
fn local_name(name: &str, chosen: Option<&str>) -> Result<mcp_key::ServerName, CliError> {
    let local = chosen.unwrap_or_else(|| name.rsplit('/').next().unwrap_or(name));
    mcp_key::ServerName::new(local).map_err(|e| {
        CliError::usage(format!("`{local}` cannot name a server here: {e}"))
            .with_hint("choose the entry's name with --as NAME")
    })
}

/// `--config FILE`, else the scope's file.
fn target_file(global: &GlobalArgs, scope: AddScope) -> Result<PathBuf, CliError> {
    if let Some(file) = &global.config {
        return Ok(file.clone());
    }
    match scope {
        AddScope::Project => Ok(PathBuf::from("mcp.toml")),
        AddScope::User => crate::host::config::user_file().ok_or_else(|| {
            CliError::usage("cannot find the user configuration: HOME is not set")
                .with_hint("pass --config FILE")
        }),
    }
}

/// `--using KIND`, else the first package or remote.
fn choose_target(server: &RegistryServer, using: Option<&str>) -> Result<InstallTarget, CliError> {
    let targets = server.targets();
    let found = match using {
        None => targets.first().copied(),
        Some("remote") => targets
            .iter()
            .copied()
            .find(|t| matches!(t, InstallTarget::Remote(_))),
        Some(kind) => [
            PackageType::Npm,
            PackageType::Pypi,
            PackageType::Oci,
            PackageType::Nuget,
            PackageType::Mcpb,
        ]
        .into_iter()
        .find(|t| t.as_str() == kind)
        .and_then(|t| server.package_target(t)),
    };
    found.ok_or_else(|| {
        let offered: Vec<String> = targets
            .iter()
            .map(|t| {
                server
                    .package_type(*t)
                    .map_or("remote".to_owned(), |p| p.as_str().to_owned())
            })
            .collect();
        CliError::usage(format!(
            "{} {} offers no {}",
            server.name(),
            server.version(),
            using.unwrap_or("package or remote")
        ))
        .with_hint(format!("it offers: {}", offered.join(", ")))
    })
}

/// The `--set` answers, and on a terminal the other inputs asked one by one (never a
/// secret).
fn answers(
    server: &RegistryServer,
    target: InstallTarget,
    given: &[String],
    interactive: bool,
) -> Result<InputValues, CliError> {
    let mut values = InputValues::new();
    let mut answered = Vec::new();
    for pair in given {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(CliError::usage(format!("`--set {pair}` has no `=`"))
                .with_hint("write --set NAME=VALUE"));
        };
        values = values.with(name, value);
        answered.push(name.to_owned());
    }
    if !interactive {
        return Ok(values);
    }
    for input in server.inputs(target) {
        if input.secret || answered.contains(&input.name) {
            continue;
        }
        let mut prompt = format!("{} ({}", input.description, input.name);
        if !input.choices.is_empty() {
            prompt.push_str(&format!(", one of {}", input.choices.join("/")));
        }
        if let Some(default) = &input.default {
            prompt.push_str(&format!(", default {default}"));
        } else if !input.required {
            prompt.push_str(", optional");
        }
        prompt.push_str("): ");
        let answer = crate::term::elicit::read_line(&terminal_safe(&prompt)).unwrap_or_default();
        if !answer.is_empty() {
            values = values.with(input.name.clone(), answer);
        }
    }
    Ok(values)
}

/// The trust review of `entry` alone: written to a file of its own and read back as
/// `mcpctl trust` would show it.
fn review_of(entry: &str) -> Result<mcp_catalog::Review, CliError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("mcpctl-add-{}-{nanos}", std::process::id()));
    let file = dir.join("mcp.toml");
    let made = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&file, entry));
    let reviewed = made
        .map_err(|e| CliError::failure(format!("cannot prepare the review: {e}")))
        .and_then(|()| crate::host::config::review(&file));
    let _ = std::fs::remove_dir_all(&dir);
    reviewed.map(|(_, review)| review)
}

/// Writes the entry (in place of an older one); a project file trusted before stays
/// trusted, the person having just reviewed the change.
fn write(
    file: &Path,
    old_text: &str,
    local: &mcp_key::ServerName,
    entry: &str,
) -> Result<(), CliError> {
    let shown = file.display();
    let was_trusted = crate::host::trust::open_store()
        .ok()
        .and_then(|store| store.state(file).ok())
        .is_some_and(|state| state.is_trusted());
    if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| CliError::failure(format!("cannot create `{}`: {e}", parent.display())))?;
    }
    let text = add_entry::replace_entry(old_text, local, entry);
    std::fs::write(file, text)
        .map_err(|e| CliError::failure(format!("cannot write `{shown}`: {e}")))?;
    if was_trusted && let Ok(mut store) = crate::host::trust::open_store() {
        let _ = store.trust(file);
    }
    Ok(())
}

/// On a terminal, asks for each secret the entry reads from an environment variable,
/// without echo: the answers, by variable. An empty answer (or no terminal) keeps the
/// variable read from the environment at start.
fn ask_secrets(
    plan: &mcp_catalog::InstallPlan,
    interactive: bool,
) -> Vec<(String, mcp_key::Secret)> {
    if !interactive {
        return Vec::new();
    }
    let Some(stdio) = plan.server_config().and_then(|c| c.transport().as_stdio()) else {
        return Vec::new();
    };
    plan.inputs()
        .iter()
        .filter(|input| input.secret)
        .filter_map(|input| {
            let variable = input.variable.as_ref()?;
            if !stdio.env_vars().contains(variable) {
                return None;
            }
            let prompt = format!(
                "{} ({variable}, secret: hidden, kept in the credential store; Enter to read it \
                 from the environment instead): ",
                input.description
            );
            crate::term::inputs::ask_secret(&prompt).map(|secret| (variable.clone(), secret))
        })
        .collect()
}

/// Keeps each secret of `stored` in the credential store (the mode `file` names with
/// `credentials_store`, `auto` when it names none or does not exist yet) under a name
/// bound to server `name` of `file` (another file's server of that name never gets it),
/// as a record of its own kind ([`mcp_auth::StoredSecret`], never an OAuth record's
/// token). Called after consent and before the entry is written, so an entry never refers
/// to a secret that was not stored.
async fn store_secrets(
    file: &Path,
    name: &mcp_key::ServerName,
    stored: &[(String, mcp_key::Secret)],
) -> Result<(), CliError> {
    if stored.is_empty() {
        return Ok(());
    }
    let mode = mcp_catalog::load_file(file)
        .map(|loaded| loaded.config().credentials_store())
        .unwrap_or_default();
    let dir = crate::host::auth::data_dir().ok_or_else(|| {
        CliError::usage("cannot find a directory for stored secrets: HOME is not set").with_hint(
            "set MCPCTL_HOME or HOME, or answer the secret with Enter and set its variable instead",
        )
    })?;
    let key: mcp_key::McpServerKey = name
        .as_str()
        .parse()
        .map_err(|e| CliError::usage(format!("server `{name}`: {e}")))?;
    let store = mcp_auth::open_store(mode, &dir);
    let bound = crate::term::inputs::bound_file(file);
    for (variable, secret) in stored {
        let record = mcp_auth::StoredSecret::new(secret.clone(), bound.clone()).to_record();
        store
            .save(
                &crate::term::inputs::secret_store_key(&key, variable, file),
                &record,
            )
            .await
            .map_err(|e| {
                CliError::failure(format!(
                    "cannot keep the secret {variable} of `{name}` in the credential store: {e}; \
                     nothing was written"
                ))
            })?;
    }
    Ok(())
}
