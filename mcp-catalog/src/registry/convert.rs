//! One package or remote of a `server.json` turned into a configuration, following VS
//! Code's mapping: `npx <id>@<version>`, `uvx <id>==<version>`, `docker run -i --rm
//! [runtime arguments] [-e NAME]… <image>:<tag>`, `dnx <id>@<version> --yes [--]`, runtime
//! arguments before the package and package arguments after it.
//!
//! Where VS Code and the registry's schema differ, the schema wins: a positional argument
//! with only a `valueHint` is a value the user supplies (VS Code writes the hint itself
//! when it has no description), and an optional input left unanswered without a default
//! is left out instead of being asked for.

use std::collections::BTreeMap;

use crate::diagnostic::{ConfigError, ConfigErrorKind, ConfigErrors};
use crate::model::server::ServerConfig;
use crate::model::transport::{HttpConfig, StdioConfig, Transport};
use crate::registry::document::{
    Argument, ArgumentKind, Input, InputFormat, InstallTarget, KeyValue, Package, PackageType,
    RegistryServer, Remote, TransportKind,
};
use crate::registry::inputs::{InputValues, RegistryInput, variable_name};
use crate::registry::plan::{InstallPlan, Launch, McpbBundle, Provenance, ProvenanceSource};
use crate::registry::version::{ImageRef, is_image_digest};

impl RegistryServer {
    /// The inputs of `target` (every argument, variable, environment variable and header
    /// the user may or must supply), in command-line order, each name once. Empty for a
    /// target out of range.
    pub fn inputs(&self, target: InstallTarget) -> Vec<RegistryInput> {
        let mut walker = Walker::new(&EMPTY);
        let _ = walker.target(self, target);
        walker.inputs
    }

    /// Turns `target` into a pinned configuration with `values` answering its inputs
    /// (defaults fill the rest). Fails, listing every problem with its place in the
    /// `server.json`, when a required input has no value, an answer is not one of its
    /// `choices` or not of its `format`, a secret is given as a value or would have to be
    /// written into the command line or URL, the package is not pinned to one exact
    /// version (or an image to a tag other than `latest` or a digest), or the package
    /// runs an HTTP server (only stdio packages can be started from a configuration).
    pub fn install_plan(
        &self,
        target: InstallTarget,
        values: &InputValues,
    ) -> Result<InstallPlan, ConfigErrors> {
        let mut walker = Walker::new(values);
        let result = walker.target(self, target);
        match result {
            Some((launch, provenance)) if walker.errors.is_empty() => Ok(InstallPlan {
                launch,
                inputs: walker.inputs,
                provenance,
            }),
            _ => Err(ConfigErrors::new(walker.errors)),
        }
    }
}

static EMPTY: InputValues = InputValues::EMPTY;

/// Where a key-value input goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Env,
    Header,
}

/// A resolved environment variable or header.
enum Resolved {
    Literal(String),
    /// Read from this host environment variable.
    Reference(String),
    /// `Authorization: Bearer $VAR`.
    Bearer(String),
}

struct Walker<'v> {
    values: &'v InputValues,
    inputs: Vec<RegistryInput>,
    errors: Vec<ConfigError>,
}

impl<'v> Walker<'v> {
    fn new(values: &'v InputValues) -> Self {
        Self {
            values,
            inputs: Vec::new(),
            errors: Vec::new(),
        }
    }

    fn target(
        &mut self,
        server: &RegistryServer,
        target: InstallTarget,
    ) -> Option<(Launch, Provenance)> {
        let found = match target {
            InstallTarget::Package(index) => server
                .packages
                .get(index)
                .map(|package| self.package(server, package)),
            InstallTarget::Remote(index) => server
                .remotes
                .get(index)
                .map(|remote| self.remote(server, remote)),
        };
        match found {
            Some(result) => result,
            None => {
                self.errors.push(server.spot.error(
                    ConfigErrorKind::InvalidValue,
                    format!("`{}` has no {target}", server.name),
                    format!(
                        "choose one of: {}",
                        server
                            .targets()
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
                None
            }
        }
    }

    /// Records `input` once under `name`.
    fn note(&mut self, name: &str, input: &Input, repeated: bool, variable: Option<String>) {
        if self.inputs.iter().any(|known| known.name == name) {
            return;
        }
        self.inputs.push(RegistryInput {
            name: name.to_owned(),
            description: input.description.clone().unwrap_or_else(|| name.to_owned()),
            secret: input.secret,
            required: input.required && input.default.is_none() && !input.secret,
            default: input.default.clone(),
            placeholder: input.placeholder.clone(),
            choices: input.choices.clone(),
            format: input.format,
            repeated,
            variable,
            field: input.spot.field.clone(),
        });
    }

    /// The answers for a non-secret input, else its default; `None` when it has neither.
    /// Checks each answer against `choices` and `format`.
    fn answers(&mut self, name: &str, input: &Input, repeated: bool) -> Option<Vec<String>> {
        let given = self.values.get(name).filter(|given| !given.is_empty());
        if input.secret {
            if given.is_some() {
                self.errors.push(input.spot.error(
                    ConfigErrorKind::InlineSecret,
                    format!("`{name}` is a secret and is not taken as a value"),
                    "leave it out of the answers: the configuration reads it from the \
                     environment variable named by the input's `variable`",
                ));
            }
            return None;
        }
        let answers = match given {
            Some(given) => given.to_vec(),
            None => vec![input.default.clone()?],
        };
        if answers.len() > 1 && !repeated {
            self.errors.push(input.spot.error(
                ConfigErrorKind::InvalidValue,
                format!("`{name}` takes one value, {} were given", answers.len()),
                "give one value",
            ));
        }
        for answer in &answers {
            self.check(name, input, answer);
        }
        Some(answers)
    }

    fn check(&mut self, name: &str, input: &Input, answer: &str) {
        if !input.choices.is_empty() && !input.choices.iter().any(|c| c == answer) {
            self.errors.push(input.spot.error(
                ConfigErrorKind::InvalidValue,
                format!("`{answer}` is not one of the choices for `{name}`"),
                format!("use one of: {}", input.choices.join(", ")),
            ));
        }
        let fits = match input.format {
            InputFormat::Number => answer.parse::<f64>().is_ok_and(f64::is_finite),
            InputFormat::Boolean => matches!(answer, "true" | "false"),
            InputFormat::String | InputFormat::Filepath => true,
        };
        if !fits {
            self.errors.push(input.spot.error(
                ConfigErrorKind::WrongType,
                format!("`{answer}` is not a valid value for `{name}`"),
                match input.format {
                    InputFormat::Number => "give a decimal number",
                    _ => "give `true` or `false`",
                },
            ));
        }
    }

    fn missing(&mut self, name: &str, input: &Input) {
        let about = input
            .description
            .as_deref()
            .map_or(String::new(), |d| format!(" ({d})"));
        self.errors.push(input.spot.error(
            ConfigErrorKind::MissingField,
            format!("the required input `{name}`{about} has no value"),
            format!("supply a value for `{name}`"),
        ));
    }

    /// `{name}` in `template` replaced by each variable's answer or default. Secret
    /// variables are refused (they cannot be kept as references inside a longer text).
    fn substitute(
        &mut self,
        template: &str,
        variables: &[(String, Input)],
        what: &str,
    ) -> Option<String> {
        let mut out = template.to_owned();
        let mut complete = true;
        for (name, variable) in variables {
            let braced = format!("{{{name}}}");
            if !template.contains(&braced) {
                continue;
            }
            self.note(name, variable, false, None);
            if variable.secret {
                self.errors.push(variable.spot.error(
                    ConfigErrorKind::InlineSecret,
                    format!("the secret `{name}` would be written into {what}"),
                    "a secret can only be kept as a reference when it is a whole environment \
                     variable or header value: configure this server by hand",
                ));
                complete = false;
                continue;
            }
            match self.answers(name, variable, false) {
                Some(answers) => {
                    out = out.replace(&braced, answers.first().map_or("", String::as_str))
                }
                None => {
                    self.missing(name, variable);
                    complete = false;
                }
            }
        }
        complete.then_some(out)
    }

    fn argument(&mut self, argument: &Argument, out: &mut Vec<String>) {
        let input = &argument.input;
        let (name, flag) = match &argument.kind {
            ArgumentKind::Positional { value_hint } => (value_hint.clone(), None),
            ArgumentKind::Named { name } => (
                Some(name.trim_start_matches('-').to_owned()),
                Some(name.as_str()),
            ),
        };
        if let Some(template) = &input.value {
            let what = format!("the command line ({})", input.spot.field);
            if let Some(value) = self.substitute(template, &input.variables, &what) {
                out.extend(flag.map(str::to_owned));
                out.push(value);
            }
            return;
        }
        let name = name.unwrap_or_default();
        self.note(&name, input, argument.repeated, None);
        if input.secret {
            self.errors.push(input.spot.error(
                ConfigErrorKind::InlineSecret,
                format!("the secret argument `{name}` would be written into the command line"),
                "a secret can only be kept as a reference in an environment variable or a \
                 header: configure this server by hand",
            ));
            return;
        }
        match self.answers(&name, input, argument.repeated) {
            Some(answers) => {
                for answer in answers {
                    out.extend(flag.map(str::to_owned));
                    out.push(answer);
                }
            }
            None if input.required => self.missing(&name, input),
            // A bare flag (`--verbose`) with nothing to ask: VS Code writes it as is.
            None if flag.is_some() && input.description.is_none() && input.choices.is_empty() => {
                out.extend(flag.map(str::to_owned));
            }
            None => {}
        }
    }

    fn key_value(&mut self, kv: &KeyValue, place: Place) -> Option<Resolved> {
        let input = &kv.input;
        let reference = |name: &str| match place {
            Place::Env => kv.name.clone(),
            Place::Header => variable_name(name),
        };
        let Some(template) = &input.value else {
            if input.secret {
                let variable = reference(&kv.name);
                self.note(&kv.name, input, false, Some(variable.clone()));
                let _ = self.answers(&kv.name, input, false);
                return Some(Resolved::Reference(variable));
            }
            self.note(&kv.name, input, false, None);
            return match self.answers(&kv.name, input, false) {
                Some(answers) => answers.into_iter().next().map(Resolved::Literal),
                None if input.required => {
                    self.missing(&kv.name, input);
                    None
                }
                None => None,
            };
        };
        // A value made of one secret variable (or `Bearer {secret}` for Authorization)
        // stays a reference; other secrets in a value are refused by `substitute`.
        let secret = input
            .variables
            .iter()
            .find(|(name, variable)| variable.secret && template.contains(&format!("{{{name}}}")));
        if let Some((name, variable)) = secret {
            let whole = *template == format!("{{{name}}}");
            let bearer = place == Place::Header
                && kv.name.eq_ignore_ascii_case("authorization")
                && *template == format!("Bearer {{{name}}}");
            if whole || bearer {
                let env_name = reference(name);
                self.note(name, variable, false, Some(env_name.clone()));
                let _ = self.answers(name, variable, false);
                return Some(if bearer {
                    Resolved::Bearer(env_name)
                } else {
                    Resolved::Reference(env_name)
                });
            }
        }
        let what = match place {
            Place::Env => format!("the environment variable `{}`", kv.name),
            Place::Header => format!("the header `{}`", kv.name),
        };
        self.substitute(template, &input.variables, &what)
            .map(Resolved::Literal)
    }

    fn package(
        &mut self,
        server: &RegistryServer,
        package: &Package,
    ) -> Option<(Launch, Provenance)> {
        if package.transport != TransportKind::Stdio {
            self.errors.push(package.transport_spot.error(
                ConfigErrorKind::InvalidValue,
                "this package serves HTTP: it must be started and then connected to, which one \
                 configuration entry cannot do",
                "choose a stdio package or a remote of this server",
            ));
        }
        let mut args = Vec::new();
        if package.kind == PackageType::Oci {
            args.extend(["run", "-i", "--rm"].map(str::to_owned));
        }
        for argument in &package.runtime_arguments {
            self.argument(argument, &mut args);
        }
        let mut env = BTreeMap::new();
        let mut env_vars = Vec::new();
        for kv in &package.environment {
            let included = match self.key_value(kv, Place::Env) {
                Some(Resolved::Literal(value)) => {
                    env.insert(kv.name.clone(), value);
                    true
                }
                Some(Resolved::Reference(variable) | Resolved::Bearer(variable)) => {
                    env_vars.push(variable);
                    true
                }
                None => false,
            };
            if included && package.kind == PackageType::Oci {
                args.extend(["-e".to_owned(), kv.name.clone()]);
            }
        }
        let mut package_args = Vec::new();
        for argument in &package.package_arguments {
            self.argument(argument, &mut package_args);
        }
        let (source, reference) = self.pin(package)?;
        let provenance = Provenance {
            name: server.name.clone(),
            version: server.version.clone(),
            source,
        };
        if package.kind == PackageType::Mcpb {
            let sha256 = package.file_sha256.clone()?;
            args.extend(package_args);
            let bundle = McpbBundle {
                url: package.identifier.clone(),
                sha256,
                sha256_spot: package.file_sha256_spot.clone(),
                version: package.version.clone(),
                args,
                env,
                env_vars,
            };
            return Some((Launch::Bundle(Box::new(bundle)), provenance));
        }
        args.push(reference);
        if package.kind == PackageType::Nuget {
            // The user confirms the installation, so dnx need not ask again.
            args.push("--yes".to_owned());
            if !package_args.is_empty() {
                args.push("--".to_owned());
            }
        }
        args.extend(package_args);
        let command = match package.kind {
            PackageType::Npm => "npx",
            PackageType::Pypi => "uvx",
            PackageType::Oci => "docker",
            PackageType::Nuget | PackageType::Mcpb => "dnx",
        };
        let mut stdio = StdioConfig::new(command).with_args(args);
        stdio.env = env;
        stdio.env_vars = env_vars;
        let mut config = ServerConfig::new(Transport::Stdio(stdio));
        if let Some(description) = &server.description {
            config = config.with_description(description.clone());
        }
        Some((Launch::Server(Box::new(config)), provenance))
    }

    /// The pinned package reference for the command line and its provenance.
    fn pin(&mut self, package: &Package) -> Option<(ProvenanceSource, String)> {
        let identifier = &package.identifier;
        let version = package.version.clone();
        let file_digest = package.file_sha256.as_ref().map(ToString::to_string);
        let source = |version: Option<String>, digest: Option<String>| ProvenanceSource::Package {
            registry_type: package.kind,
            identifier: identifier.clone(),
            version,
            digest,
        };
        match package.kind {
            PackageType::Npm | PackageType::Nuget => {
                let version = version?;
                let reference = format!("{identifier}@{version}");
                Some((source(Some(version), file_digest), reference))
            }
            PackageType::Pypi => {
                let version = version?;
                let reference = format!("{identifier}=={version}");
                Some((source(Some(version), file_digest), reference))
            }
            PackageType::Mcpb => Some((source(version, file_digest), identifier.clone())),
            PackageType::Oci => self.pin_image(package),
        }
    }

    fn pin_image(&mut self, package: &Package) -> Option<(ProvenanceSource, String)> {
        let identifier = &package.identifier;
        let image = ImageRef::parse(identifier);
        let spot = &package.identifier_spot;
        if let Some(digest) = image.digest
            && !is_image_digest(digest)
        {
            self.errors.push(spot.error(
                ConfigErrorKind::InvalidValue,
                format!("`{digest}` is not an image digest"),
                "write `@sha256:` and 64 lowercase hex digits, or leave the digest out",
            ));
            return None;
        }
        if image
            .tag
            .is_some_and(|tag| tag.eq_ignore_ascii_case("latest"))
        {
            self.errors.push(spot.error(
                ConfigErrorKind::InvalidValue,
                format!("image `{identifier}` is tagged `latest`, which names whatever is newest when it runs"),
                "pin the image to a version tag or a digest, e.g. `owner/image:1.0.2`",
            ));
            return None;
        }
        let tag = match (image.tag, package.version.as_deref()) {
            (Some(tag), Some(version)) if tag != version => {
                self.errors.push(package.version_spot.error(
                    ConfigErrorKind::InvalidValue,
                    format!("version `{version}` differs from the image's tag `{tag}`"),
                    "remove `version` (the tag in `identifier` pins the image) or make them equal",
                ));
                return None;
            }
            (Some(tag), _) => Some(tag.to_owned()),
            (None, version) => version.map(str::to_owned),
        };
        if tag.is_none() && image.digest.is_none() {
            self.errors.push(spot.error(
                ConfigErrorKind::InvalidValue,
                format!("image `{identifier}` has neither a tag nor a digest, so it is not pinned"),
                "add a version tag or a digest, e.g. `owner/image:1.0.2`",
            ));
            return None;
        }
        let mut reference = image.repository.to_owned();
        if let Some(tag) = &tag {
            reference = format!("{reference}:{tag}");
        }
        if let Some(digest) = image.digest {
            reference = format!("{reference}@{digest}");
        }
        let source = ProvenanceSource::Package {
            registry_type: PackageType::Oci,
            identifier: image.repository.to_owned(),
            version: tag,
            digest: image.digest.map(str::to_owned),
        };
        Some((source, reference))
    }

    fn remote(&mut self, server: &RegistryServer, remote: &Remote) -> Option<(Launch, Provenance)> {
        let url = self.substitute(&remote.url, &remote.variables, "the URL");
        let mut http = HttpConfig::new(url.clone().unwrap_or_default());
        for kv in &remote.headers {
            http = match self.key_value(kv, Place::Header) {
                Some(Resolved::Literal(value)) => http.with_http_header(kv.name.clone(), value),
                Some(Resolved::Reference(variable)) => {
                    http.with_env_http_header(kv.name.clone(), variable)
                }
                Some(Resolved::Bearer(variable)) => http.with_bearer_token_env_var(variable),
                None => http,
            };
        }
        let url = url?;
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            self.errors.push(remote.url_spot.error(
                ConfigErrorKind::InvalidUrl,
                format!(
                    "`{url}` is not an http:// or https:// URL after its variables are filled in"
                ),
                "give the URL's variables values that make an absolute URL",
            ));
            return None;
        }
        let transport = match remote.kind {
            TransportKind::Sse => Transport::Sse(http),
            _ => Transport::StreamableHttp(http),
        };
        let mut config = ServerConfig::new(transport);
        if let Some(description) = &server.description {
            config = config.with_description(description.clone());
        }
        let provenance = Provenance {
            name: server.name.clone(),
            version: server.version.clone(),
            source: ProvenanceSource::Remote { url },
        };
        Some((Launch::Server(Box::new(config)), provenance))
    }
}
