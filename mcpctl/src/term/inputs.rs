//! VS Code `${input:id}` values asked on the terminal.
//!
//! A `.vscode/mcp.json` declares `inputs` that VS Code asks its user for. mcpctl does the
//! same when it runs on a terminal: the first time the configuration needs an input that
//! `MCP_INPUT_<ID>` does not answer, it asks on stderr and reads the answer from the
//! terminal (hidden for `"password": true`). Each input is asked once per run. Without a
//! terminal (or with `--json`) nothing is asked, and a server using an unanswered input
//! fails alone with reason `config`, naming the variable to set.
//!
//! Also the secrets `mcpctl add` stored for a server ([`SecretEnv`]): read from the
//! credential store before anything starts, and given to a server whose `env` refers to
//! them (`${secret:NAME}`), never written anywhere else.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Mutex;

use mcp_catalog::{ConfigFormat, DeclaredInput, Discovery, EnvLookup, ProcessEnv};

/// How an answer is obtained: the terminal in mcpctl, a script in tests.
type Ask = Box<dyn Fn(&DeclaredInput) -> Option<String> + Send + Sync>;

/// The process environment, plus the answers to the declared inputs of the configuration's
/// VS Code files (asked when first needed).
pub(crate) struct InputEnv {
    declared: BTreeMap<String, DeclaredInput>,
    answers: Mutex<BTreeMap<String, Option<String>>>,
    ask: Option<Ask>,
}

impl InputEnv {
    /// The inputs declared by the files `discovery` may load; asked on the terminal when
    /// stdin and stderr are terminals and `json` is off.
    pub(crate) fn for_discovery(discovery: &Discovery, json: bool) -> Self {
        let mut declared = BTreeMap::new();
        for path in discovery.locations() {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            for input in mcp_catalog::declared_inputs(&text, ConfigFormat::detect(&path, &text)) {
                declared.entry(input.variable.clone()).or_insert(input);
            }
        }
        let interactive =
            !json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        let ask: Option<Ask> = interactive.then(|| Box::new(ask_terminal) as Ask);
        Self::new(declared, ask)
    }

    fn new(declared: BTreeMap<String, DeclaredInput>, ask: Option<Ask>) -> Self {
        Self {
            declared,
            answers: Mutex::new(BTreeMap::new()),
            ask,
        }
    }
}

impl EnvLookup for InputEnv {
    fn get(&self, name: &str) -> Option<String> {
        if let Some(value) = ProcessEnv.get(name) {
            return Some(value);
        }
        let (input, ask) = (self.declared.get(name)?, self.ask.as_ref()?);
        let mut answers = self.answers.lock().ok()?;
        answers
            .entry(name.to_owned())
            .or_insert_with(|| ask(input).filter(|a| !a.is_empty()))
            .clone()
    }
}

/// The secrets stored for the configuration's servers whose `env` refers to one
/// (`${secret:NAME}`, [`mcp_catalog::RegistryInput::secret_reference`]), read once before
/// any server starts and answered under their lookup names
/// ([`mcp_catalog::RegistryInput::secret_lookup_name`]); every other name from the process
/// environment.
pub(crate) struct SecretEnv {
    secrets: BTreeMap<String, mcp_key::Secret>,
}

impl SecretEnv {
    /// The secrets `catalog`'s entries refer to, loaded from the credential store that
    /// `open` opens; `None` when no entry refers to one (the store is then not opened). A
    /// secret the store does not have (or cannot give) is left out: the server fails alone,
    /// naming it.
    pub(crate) async fn for_catalog(
        catalog: &mcp_catalog::ResolvedCatalog,
        open: impl FnOnce() -> Result<std::sync::Arc<dyn mcp_auth::CredentialStore>, String>,
    ) -> Option<Self> {
        // Each reference with the file its entry comes from: secrets are bound to it.
        let references: Vec<(mcp_key::McpServerKey, String, std::path::PathBuf)> = catalog
            .servers()
            .filter_map(|(key, config)| {
                let file = std::path::PathBuf::from(catalog.source(key)?.name());
                Some((key, config.transport().as_stdio()?, file))
            })
            .flat_map(|(key, stdio, file)| {
                stdio.env().values().filter_map(move |value| {
                    let variable = mcp_catalog::RegistryInput::referenced_secret(value)?.ok()?;
                    Some((key.clone(), variable.to_owned(), file.clone()))
                })
            })
            .collect();
        if references.is_empty() {
            return None;
        }
        let mut secrets = BTreeMap::new();
        match open() {
            Ok(store) => {
                for (key, variable, file) in references {
                    let name = mcp_catalog::RegistryInput::secret_lookup_name(
                        key.name().as_str(),
                        &variable,
                    );
                    match store.load(&secret_store_key(&key, &variable, &file)).await {
                        Ok(Some(record)) => {
                            let bound = bound_file(&file);
                            if let Some(secret) =
                                mcp_auth::StoredSecret::from_record(&record, &bound)
                            {
                                secrets.insert(name, secret.value);
                            }
                        }
                        Ok(None) => {}
                        Err(e) => crate::term::render::warn(&format!(
                            "the secret {variable} of server `{key}` cannot be read: {e}"
                        )),
                    }
                }
            }
            Err(e) => crate::term::render::warn(&format!(
                "{e}; servers that refer to stored secrets start without them"
            )),
        }
        Some(Self { secrets })
    }
}

impl EnvLookup for SecretEnv {
    fn get(&self, name: &str) -> Option<String> {
        match self.secrets.get(name) {
            Some(secret) => Some(secret.expose().to_owned()),
            None => ProcessEnv.get(name),
        }
    }
}

/// Where the secret `variable` of server `key` is kept in the credential store: the
/// server's key with the secret's lookup name in place of a URL, so it is bound to the
/// server and never an OAuth record's key.
pub(crate) fn secret_store_key(
    key: &mcp_key::McpServerKey,
    variable: &str,
    file: &std::path::Path,
) -> mcp_auth::StoreKey {
    let name = mcp_catalog::RegistryInput::secret_lookup_name(key.name().as_str(), variable);
    mcp_auth::StoreKey::new(key, &format!("{name}|{}", bound_file(file)))
}

/// The configuration file a stored secret is bound to, as the text its record keeps
/// ([`mcp_auth::StoredSecret::config_file`]) and its key is made of: [`bound_path`].
pub(crate) fn bound_file(file: &std::path::Path) -> String {
    bound_path(file).display().to_string()
}

/// The configuration file a stored secret is bound to, as one path however it was named:
/// its folder resolved (symlinks, `..`) when it exists, else made absolute. A secret is
/// stored for the server of one file, so another file that names a server the same (a
/// cloned project, say) never gets it.
fn bound_path(file: &std::path::Path) -> std::path::PathBuf {
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_owned());
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map_or_else(|_| absolute.clone(), |dir| dir.join(name)),
        _ => absolute,
    }
}

/// Reads a secret on the terminal without echo; `None` for an empty answer or no terminal.
pub(crate) fn ask_secret(prompt: &str) -> Option<mcp_key::Secret> {
    rpassword::prompt_password(crate::term::render::terminal_safe(prompt))
        .ok()
        .map(|a| a.trim_end_matches(['\r', '\n']).to_owned())
        .filter(|a| !a.is_empty())
        .map(mcp_key::Secret::new)
}

/// Asks for one input on stderr; reads the answer from the terminal (hidden for a
/// password). An empty answer or a read error leaves the input unanswered.
fn ask_terminal(input: &DeclaredInput) -> Option<String> {
    let prompt = format!(
        "{} (input `{}`, or set {}): ",
        crate::term::render::terminal_safe(&input.description),
        crate::term::render::terminal_safe(&input.id),
        input.variable
    );
    if input.password {
        return rpassword::prompt_password(prompt)
            .ok()
            .map(|a| a.trim_end_matches(['\r', '\n']).to_owned());
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{prompt}");
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).ok()?;
    Some(answer.trim_end_matches(['\r', '\n']).to_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn declared(id: &str) -> (String, DeclaredInput) {
        let text = format!(r#"{{"inputs": [{{"type": "promptString", "id": "{id}"}}]}}"#);
        let input = mcp_catalog::declared_inputs(&text, ConfigFormat::VsCode).remove(0);
        (input.variable.clone(), input)
    }

    #[test]
    fn a_declared_input_is_asked_once_and_undeclared_names_never() {
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&asked);
        let env = InputEnv::new(
            BTreeMap::from([declared("mcpctl-test-token")]),
            Some(Box::new(move |input: &DeclaredInput| {
                counter.fetch_add(1, Ordering::SeqCst);
                Some(format!("answer for {}", input.id))
            })),
        );
        let name = "MCP_INPUT_MCPCTL_TEST_TOKEN";
        assert_eq!(
            env.get(name).as_deref(),
            Some("answer for mcpctl-test-token")
        );
        assert_eq!(
            env.get(name).as_deref(),
            Some("answer for mcpctl-test-token")
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert_eq!(env.get("MCP_INPUT_MCPCTL_TEST_UNDECLARED"), None);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_empty_answer_or_no_terminal_leaves_the_input_unanswered() {
        let name = "MCP_INPUT_MCPCTL_TEST_EMPTY";
        let env = InputEnv::new(
            BTreeMap::from([declared("mcpctl-test-empty")]),
            Some(Box::new(|_: &DeclaredInput| Some(String::new()))),
        );
        assert_eq!(env.get(name), None);
        let env = InputEnv::new(BTreeMap::from([declared("mcpctl-test-empty")]), None);
        assert_eq!(env.get(name), None);
    }
}
