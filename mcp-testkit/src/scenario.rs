//! The serializable description of a fake server: [`Scenario`] and its parts.
//!
//! The same value drives all three runners (in process, stdio binary, streamable HTTP).
//! Files may be TOML or JSON; field names are `snake_case`, except the MCP wire objects
//! (`input_schema` etc. are converted to the protocol's camelCase for you).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Error;
use crate::{SkillOptions, SkillSpec, TaskAsk, TaskEnd};

/// A complete description of a fake MCP server: what it offers and how it misbehaves.
///
/// Build one in code with the `with_*` methods, or load it with [`Scenario::from_path`].
///
/// ```
/// use mcp_testkit::{Behavior, Scenario, ToolSpec};
///
/// let scenario = Scenario::new("demo")
///     .with_tool(ToolSpec::echo("echo"))
///     .with_tool(ToolSpec::new("nap", Behavior::Sleep { ms: 50 }))
///     .with_instructions("Use echo to test.");
/// let text = toml::to_string(&scenario).unwrap();
/// assert_eq!(Scenario::from_toml_str(&text).unwrap(), scenario);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Scenario {
    /// `serverInfo` sent in the `initialize` result.
    pub server_info: ServerInfoSpec,
    /// `instructions` sent in the `initialize` result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Capability flags advertised in the `initialize` result.
    pub capabilities: CapabilityFlags,
    /// The tools, in `tools/list` order. Names are served as given, so a scenario can
    /// misbehave like real servers do: a name listed twice is listed twice (calls go to
    /// the first tool of that name), and an empty name is listed as `""`.
    pub tools: Vec<ToolSpec>,
    /// Static resources, in `resources/list` order.
    pub resources: Vec<ResourceSpec>,
    /// Resource templates, in `resources/templates/list` order.
    pub resource_templates: Vec<ResourceTemplateSpec>,
    /// Prompts, in `prompts/list` order.
    pub prompts: Vec<PromptSpec>,
    /// Server-level misbehaviour.
    pub faults: Faults,
    /// Files the server writes for a test's assertions.
    pub record: Recording,
    /// Caching hints (`ttlMs`, `cacheScope`) put on every list page (MCP 2026-07-28;
    /// rmcp's server fills in `ttlMs: 0, cacheScope: "private"` where a page has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_hints: Option<CacheHints>,
    /// Changes of the tool list that happen by themselves after some calls (a server
    /// rewriting a tool behind the user's back): see [`ToolsChange`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_changes: Vec<ToolsChange>,
    /// Skills (the Skills extension, SEP-2640), in `skills/list` order: with any, the
    /// server announces the extension and serves `skills/list`, `skills/get` and the
    /// skills' files (see [`SkillSpec`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<SkillSpec>,
    /// How the skills are served (pages, directory reads).
    #[serde(skip_serializing_if = "crate::skills::is_default")]
    pub skill_options: SkillOptions,
    /// Events (the Events extension, SEP-3415): with them, the server announces the
    /// extension and serves `events/list`, `events/poll` and `events/stream` (see
    /// [`EventsSpec`](crate::EventsSpec)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<crate::EventsSpec>,
}

/// A change of the tool list triggered by the number of calls (all runners): once the
/// server has answered `after_calls` `tools/call` requests (of any tool, in all), it removes
/// the tools named in `remove`, appends `add`, and sends
/// `notifications/tools/list_changed` (to listening clients in the 2026-07-28 era) before
/// the reply of that last call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ToolsChange {
    /// After how many calls, counted from the server's start (1: right after the first).
    pub after_calls: u64,
    /// Tools to add (a tool of the same name is best removed first, in `remove`).
    pub add: Vec<ToolSpec>,
    /// Names of tools to remove.
    pub remove: Vec<String>,
}

impl ToolsChange {
    /// Replaces `tool` (removed by name, then added) after `after_calls` calls.
    pub fn replace_after(after_calls: u64, tool: ToolSpec) -> Self {
        Self {
            after_calls,
            remove: vec![tool.name.clone()],
            add: vec![tool],
        }
    }
}

/// The caching hints of [`Scenario::cache_hints`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct CacheHints {
    /// `ttlMs`: how long a client may keep the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// `cacheScope`: `"public"` or `"private"` (any other text is sent as is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl CacheHints {
    /// Hints saying the pages stay fresh `ttl_ms` milliseconds, for `scope`.
    pub fn new(ttl_ms: u64, scope: impl Into<String>) -> Self {
        Self {
            ttl_ms: Some(ttl_ms),
            scope: Some(scope.into()),
        }
    }
}

impl Default for Scenario {
    fn default() -> Self {
        Self::new("mcp-fake-server")
    }
}

impl Scenario {
    /// An empty scenario whose server calls itself `name` (version [`DEFAULT_VERSION`]).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            server_info: ServerInfoSpec::new(name),
            instructions: None,
            capabilities: CapabilityFlags::default(),
            tools: Vec::new(),
            resources: Vec::new(),
            resource_templates: Vec::new(),
            prompts: Vec::new(),
            faults: Faults::default(),
            record: Recording::default(),
            cache_hints: None,
            tool_changes: Vec::new(),
            skills: Vec::new(),
            skill_options: SkillOptions::default(),
            events: None,
        }
    }

    /// Serve events.
    #[must_use]
    pub fn with_events(mut self, events: crate::EventsSpec) -> Self {
        self.events = Some(events);
        self
    }

    /// Add a skill.
    #[must_use]
    pub fn with_skill(mut self, skill: SkillSpec) -> Self {
        self.skills.push(skill);
        self
    }

    /// Set how the skills are served.
    #[must_use]
    pub fn with_skill_options(mut self, options: SkillOptions) -> Self {
        self.skill_options = options;
        self
    }

    /// Add a tool.
    #[must_use]
    pub fn with_tool(mut self, tool: ToolSpec) -> Self {
        self.tools.push(tool);
        self
    }

    /// Add a change of the tool list that happens after some calls.
    #[must_use]
    pub fn with_tools_change(mut self, change: ToolsChange) -> Self {
        self.tool_changes.push(change);
        self
    }

    /// Add a resource.
    #[must_use]
    pub fn with_resource(mut self, resource: ResourceSpec) -> Self {
        self.resources.push(resource);
        self
    }

    /// Add a resource template.
    #[must_use]
    pub fn with_resource_template(mut self, template: ResourceTemplateSpec) -> Self {
        self.resource_templates.push(template);
        self
    }

    /// Add a prompt.
    #[must_use]
    pub fn with_prompt(mut self, prompt: PromptSpec) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Set the instructions.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Replace the server info.
    #[must_use]
    pub fn with_server_info(mut self, info: ServerInfoSpec) -> Self {
        self.server_info = info;
        self
    }

    /// Replace the capability flags.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: CapabilityFlags) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Replace the server-level faults.
    #[must_use]
    pub fn with_faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Put these caching hints on every list page.
    #[must_use]
    pub fn with_cache_hints(mut self, hints: CacheHints) -> Self {
        self.cache_hints = Some(hints);
        self
    }

    /// Replace the recording options.
    #[must_use]
    pub fn with_record(mut self, record: Recording) -> Self {
        self.record = record;
        self
    }

    /// Parse a TOML scenario.
    ///
    /// # Errors
    /// [`Error::ScenarioParse`] with the parser's message.
    pub fn from_toml_str(text: &str) -> Result<Self, Error> {
        toml::from_str(text).map_err(|e| Error::ScenarioParse {
            origin: "<toml string>".to_owned(),
            message: e.to_string(),
        })
    }

    /// Parse a JSON scenario.
    ///
    /// # Errors
    /// [`Error::ScenarioParse`] with the parser's message.
    pub fn from_json_str(text: &str) -> Result<Self, Error> {
        serde_json::from_str(text).map_err(|e| Error::ScenarioParse {
            origin: "<json string>".to_owned(),
            message: e.to_string(),
        })
    }

    /// Load a scenario file; the format follows the extension (`.toml` or `.json`).
    ///
    /// # Errors
    /// [`Error::ScenarioRead`], [`Error::ScenarioExtension`] or [`Error::ScenarioParse`].
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let parse: fn(&str) -> Result<Self, Error> = match ext {
            "toml" => Self::from_toml_str,
            "json" => Self::from_json_str,
            _ => {
                return Err(Error::ScenarioExtension {
                    path: path.to_owned(),
                });
            }
        };
        let text = std::fs::read_to_string(path).map_err(|source| Error::ScenarioRead {
            path: path.to_owned(),
            source,
        })?;
        parse(&text).map_err(|e| match e {
            Error::ScenarioParse { message, .. } => Error::ScenarioParse {
                origin: path.display().to_string(),
                message,
            },
            other => other,
        })
    }

    /// Write the scenario as JSON to `path` (handy for handing it to the binary).
    ///
    /// # Errors
    /// [`Error::WriteFile`].
    pub fn write_json(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::ScenarioParse {
            origin: path.display().to_string(),
            message: e.to_string(),
        })?;
        std::fs::write(path, text).map_err(|source| Error::WriteFile {
            path: path.to_owned(),
            source,
        })
    }
}

/// The default `serverInfo.version`.
pub const DEFAULT_VERSION: &str = "0.0.0-fake";

/// `serverInfo` of the `initialize` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerInfoSpec {
    /// `name`.
    pub name: String,
    /// `version` (default [`DEFAULT_VERSION`]).
    #[serde(default = "default_version")]
    pub version: String,
    /// `title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

fn default_version() -> String {
    DEFAULT_VERSION.to_owned()
}

impl ServerInfoSpec {
    /// A server info with `name` and the default version.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: default_version(),
            title: None,
        }
    }

    /// Set the version.
    #[must_use]
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Set the title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// Capability flags. `tools` is always advertised; `resources` when the scenario has
/// resources or templates; `prompts` when it has prompts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct CapabilityFlags {
    /// `tools.listChanged`.
    pub tools_list_changed: bool,
    /// `resources.listChanged`.
    pub resources_list_changed: bool,
    /// `resources.subscribe`.
    pub resources_subscribe: bool,
    /// `prompts.listChanged`.
    pub prompts_list_changed: bool,
    /// `logging: {}`: the server sends log messages (`notifications/message`, see
    /// [`Behavior::Log`]) and takes `logging/setLevel`.
    pub logging: bool,
    /// `completions: {}`: the server answers `completion/complete` from the
    /// `completions` of its prompts ([`PromptSpec::completions`]) and resource templates
    /// ([`ResourceTemplateSpec::completions`]).
    pub completions: bool,
    /// `experimental`: each entry advertised as given (a host's metadata prefix, for
    /// example). Not advertised when empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub experimental: BTreeMap<String, serde_json::Value>,
    /// `extensions: {"io.modelcontextprotocol/tasks": {}}`: the server speaks the tasks
    /// extension (SEP-2663) in both eras. A call to a [`Behavior::Task`] tool from a
    /// client that declared the extension then answers with a task
    /// (`resultType: "task"`), and `tasks/get`, `tasks/update`, `tasks/cancel` are
    /// served. Off: task tools answer like ordinary tools.
    pub tasks: bool,
}

impl CapabilityFlags {
    /// Set `tools.listChanged`.
    #[must_use]
    pub fn with_tools_list_changed(mut self, on: bool) -> Self {
        self.tools_list_changed = on;
        self
    }

    /// Set `resources.listChanged`.
    #[must_use]
    pub fn with_resources_list_changed(mut self, on: bool) -> Self {
        self.resources_list_changed = on;
        self
    }

    /// Set `resources.subscribe`.
    #[must_use]
    pub fn with_resources_subscribe(mut self, on: bool) -> Self {
        self.resources_subscribe = on;
        self
    }

    /// Set `prompts.listChanged`.
    #[must_use]
    pub fn with_prompts_list_changed(mut self, on: bool) -> Self {
        self.prompts_list_changed = on;
        self
    }

    /// Set `logging` (announced as `logging: {}`).
    #[must_use]
    pub fn with_logging(mut self, on: bool) -> Self {
        self.logging = on;
        self
    }

    /// Set `completions` (announced as `completions: {}`).
    #[must_use]
    pub fn with_completions(mut self, on: bool) -> Self {
        self.completions = on;
        self
    }

    /// Set `tasks` (announced as the extension `io.modelcontextprotocol/tasks`).
    #[must_use]
    pub fn with_tasks(mut self, on: bool) -> Self {
        self.tasks = on;
        self
    }

    /// Advertise the experimental capability `name` with `settings` (an object).
    #[must_use]
    pub fn with_experimental(
        mut self,
        name: impl Into<String>,
        settings: serde_json::Value,
    ) -> Self {
        self.experimental.insert(name.into(), settings);
        self
    }
}

/// One tool: its `tools/list` entry and what `tools/call` does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ToolSpec {
    /// `name`.
    pub name: String,
    /// `title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `inputSchema` (default: an object schema accepting anything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// `outputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// `annotations` (wire shape: `{"readOnlyHint": true, ...}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// What a call does (default: [`Behavior::Echo`]).
    #[serde(default)]
    pub behavior: Behavior,
}

impl ToolSpec {
    /// A tool named `name` with `behavior` and a description naming the behaviour.
    pub fn new(name: impl Into<String>, behavior: Behavior) -> Self {
        Self {
            description: Some(format!("fake tool ({})", behavior.kind())),
            name: name.into(),
            title: None,
            input_schema: None,
            output_schema: None,
            annotations: None,
            meta: None,
            behavior,
        }
    }

    /// An echo tool: see [`Behavior::Echo`].
    pub fn echo(name: impl Into<String>) -> Self {
        Self::new(name, Behavior::Echo)
    }

    /// Set the title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Set the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Set the input schema (a JSON object schema).
    #[must_use]
    pub fn with_input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// Set the output schema (a JSON object schema).
    #[must_use]
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Set the annotations (wire shape).
    #[must_use]
    pub fn with_annotations(mut self, annotations: Value) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Set `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// What a tool call does. In files: `behavior = { kind = "sleep", ms = 100 }`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Behavior {
    /// Return the arguments: text content is their JSON, `structuredContent` is the
    /// arguments object (`{}` when none).
    #[default]
    Echo,
    /// Return `value` as `structuredContent` (and its JSON as text content).
    Structured {
        /// The structured content.
        value: Value,
    },
    /// Return a tool error result (`isError: true`) with `message` as text.
    Error {
        /// The error text.
        message: String,
    },
    /// Sleep `ms` milliseconds, then echo. Cancellation (`notifications/cancelled`)
    /// ends the sleep early.
    Sleep {
        /// Milliseconds.
        ms: u64,
    },
    /// Wait until `parties` calls (of any tools naming the same barrier) have arrived,
    /// then echo. Proves calls overlap.
    Barrier {
        /// Barrier name, shared by every tool of the server (and every HTTP session).
        name: String,
        /// How many callers must arrive before any returns.
        parties: usize,
    },
    /// Send `steps` progress notifications (`progress` = 1..=steps, `total` = steps) to
    /// the request's `progressToken` (none when the call has no token), then echo with
    /// `{"progress_token": ..., "steps": n}` as structured content.
    Progress {
        /// Number of notifications.
        steps: u32,
    },
    /// Like [`Behavior::Progress`], with `interval_ms` milliseconds before each notification
    /// (a slow tool that keeps reporting; cancellation ends it early).
    SlowProgress {
        /// Number of notifications.
        steps: u32,
        /// Milliseconds before each notification.
        interval_ms: u64,
    },
    /// Send a form-mode `elicitation/create` and return the client's answer as structured
    /// content `{"action": "...", "content": {...}}`. In the 2026-07-28 era the request
    /// goes out as an MRTR round (SEP-2322): the call answers `input_required` with the
    /// request and a `requestState`, and the client's retry, carrying the answer and the
    /// state unmodified, gets the result (a retry whose state was changed gets an
    /// "invalid params" error). The same holds for [`Behavior::ElicitUrl`] and
    /// [`Behavior::ListRoots`].
    ElicitForm {
        /// The message shown to the user.
        message: String,
        /// `requestedSchema` (an object schema of primitive properties).
        schema: Value,
    },
    /// Send a URL-mode `elicitation/create` and return `{"action": "..."}`.
    ElicitUrl {
        /// The message shown to the user.
        message: String,
        /// The URL to visit.
        url: String,
        /// The elicitation id.
        elicitation_id: String,
    },
    /// Send `elicitation/create` with `params` exactly as given (malformed ones too, such
    /// as a form without `requestedSchema`) and return the client's answer as structured
    /// content: `{"result": {...}}`, or `{"error": {"code": ..., "message": ...}}` when the
    /// client answered with an error.
    ElicitRaw {
        /// The request's `params`.
        params: Value,
    },
    /// Ask the client for its roots (`roots/list`; an MRTR round in the 2026-07-28 era) and
    /// return its answer as structured content: `{"roots": [...]}`.
    ListRoots,
    /// Replace the tool set (remove `remove`, append `add`), send
    /// `notifications/tools/list_changed`, then return `{"tools": [names...]}`.
    ChangeTools {
        /// Tools to add.
        #[serde(default)]
        add: Vec<ToolSpec>,
        /// Names of tools to remove.
        #[serde(default)]
        remove: Vec<String>,
    },
    /// Replace the prompt set (remove the prompts named in `remove`, append `add`), send
    /// `notifications/prompts/list_changed` (to the calling session in the 2025-11-25
    /// era; in the 2026-07-28 era to the open `subscriptions/listen` requests that
    /// accepted prompt list changes, which needs [`CapabilityFlags::prompts_list_changed`]),
    /// then return `{"prompts": [names...]}`.
    ChangePrompts {
        /// Prompts to add.
        #[serde(default)]
        add: Vec<PromptSpec>,
        /// Names of prompts to remove.
        #[serde(default)]
        remove: Vec<String>,
    },
    /// Replace the static resources (remove the resources whose URI is in `remove`,
    /// append `add`), send `notifications/resources/list_changed` (to the calling session
    /// in the 2025-11-25 era; in the 2026-07-28 era to the open `subscriptions/listen`
    /// requests that accepted resource list changes, which needs
    /// [`CapabilityFlags::resources_list_changed`]), then return `{"resources": [uris...]}`.
    ChangeResources {
        /// Resources to add.
        #[serde(default)]
        add: Vec<ResourceSpec>,
        /// URIs of resources to remove.
        #[serde(default)]
        remove: Vec<String>,
    },
    /// Send `notifications/resources/updated` for `uri` to every client subscribed to it
    /// (`resources/subscribe` in the 2025-11-25 era, a `subscriptions/listen` naming it in
    /// the 2026-07-28 era), then return `{"notified": N}`.
    UpdateResource {
        /// The resource that changed.
        uri: String,
    },
    /// Ask the client's model for a message (`sampling/createMessage`): one user text
    /// message `prompt`, `maxTokens` = `max_tokens`, and when `tools` is not empty one
    /// tool definition per name (input schema `{"type": "object"}`). Returns the client's
    /// answer as structured content `{"result": {...}}` (its `CreateMessageResult`), or
    /// `{"error": {"code": ..., "message": ...}}` when the client answered with an error.
    /// The request is sent whatever the client announced (rmcp's own servers refuse to
    /// send `tools` to a client without `sampling.tools`), so a host's answer to a request
    /// it did not ask for can be tested. In the 2026-07-28 era it is an MRTR round (see
    /// [`Behavior::ElicitForm`]) whose input request is `{"method":
    /// "sampling/createMessage", "params": {...}}`; the retry's answer is returned as
    /// `{"result": answer}`.
    Sample {
        /// The text of the one user message.
        prompt: String,
        /// `maxTokens`.
        max_tokens: u32,
        /// Names of tools offered to the model (none: no `tools` in the request).
        #[serde(default)]
        tools: Vec<String>,
    },
    /// Send `count` log messages (`notifications/message`) with `level`, `logger` and
    /// `data`, then return `{"sent": N}`. With `count` > 1 each message's data is
    /// `{"n": i, "data": data}` (i = 1..=count) so that each is distinct. Messages below
    /// the level the client set with `logging/setLevel` are not sent (no level set: all
    /// are). `level` is one of MCP's levels, `debug` to `emergency` (another is a tool
    /// error). The messages go through the call's own session in both eras (rmcp forbids
    /// a 2026-07-28 server only requests of its own, not notifications): on stdio and in
    /// process they share the one stream; over HTTP they travel on the call's SSE response.
    Log {
        /// `level`: `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or
        /// `emergency`.
        level: String,
        /// `logger` (none: no `logger` field).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        logger: Option<String>,
        /// `data`, any JSON.
        data: Value,
        /// How many messages (default 1).
        #[serde(default = "one")]
        count: u32,
    },
    /// Send `sampling/createMessage` with `params` exactly as given (malformed ones too,
    /// such as a message of a content type MCP does not have) and return the client's
    /// answer like [`Behavior::Sample`]. The 2025-11-25 era only (a 2026-07-28 server
    /// sends no requests of its own).
    SampleRaw {
        /// The request's `params`.
        params: Value,
    },
    /// Return `result`, a whole `CallToolResult` as JSON (content, `structuredContent`,
    /// `_meta`, `isError`), as it is.
    Result {
        /// The result.
        result: Value,
    },
    /// Crash mid-call: the binary calls `std::process::exit(code)`; in process and over
    /// HTTP the transport is closed (the call never gets an answer).
    Exit {
        /// The process exit code.
        code: i32,
    },
    /// Answer `{"exited": code}` (as `structuredContent` and text), then exit with `code`.
    /// The binary (stdio) writes the answer straight to stdout and exits before writing
    /// anything else, so the answer is in the pipe when the process ends; elsewhere the
    /// call is just answered.
    AnswerThenExit {
        /// The process exit code.
        code: i32,
    },
    /// Return one text content block of exactly `bytes` bytes (`x` repeated).
    Large {
        /// Size of the text.
        bytes: usize,
    },
    /// Return `{"env": {NAME: VALUE, ...}, "cwd": "..."}` of the server process as
    /// structured content (for launcher tests).
    ReportEnv,
    /// Answer the call with a reply the client cannot read, written straight to stdout
    /// with the call's id, then never answer properly (until cancelled). Binary (stdio)
    /// runner only; elsewhere the call just waits.
    BrokenReply {
        /// What is wrong with the reply.
        fault: ReplyFault,
    },
    /// Long-running work that becomes a task (the tasks extension, SEP-2663) when the
    /// server announces [`CapabilityFlags::tasks`] and the calling client declared the
    /// extension: the call answers at once with the task (`status: "working"`) and the
    /// work goes on in the background, observed with `tasks/get`, fed with `tasks/update`,
    /// stopped with `tasks/cancel`. Otherwise the call runs the same work and answers
    /// with its result like any tool. See [Tasks](crate#tasks) for the whole picture.
    Task {
        /// How long the work takes in all, in milliseconds.
        work_ms: u64,
        /// The work is split into this many equal steps (0 counts as 1); at the start of
        /// step i the task's `statusMessage` becomes `"step i of n"`.
        #[serde(default)]
        steps: u32,
        /// How the work ends (default [`TaskEnd::Complete`]: the echoed arguments).
        #[serde(default)]
        end: TaskEnd,
        /// A question for the user, asked halfway through the work (`work_ms / 2`): the
        /// task goes `input_required` until `tasks/update` answers it. The answer is in
        /// the result as `"answer"` (see [`TaskEnd::Complete`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ask: Option<TaskAsk>,
        /// `pollIntervalMs` of the task, as given (none: no `pollIntervalMs`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        poll_interval_ms: Option<u64>,
        /// `ttlMs` of the task, as given (none: `null`, kept for ever). Once this many
        /// milliseconds (tokio time) have passed since its creation the server forgets
        /// the task: its id is unknown to `tasks/get`, `tasks/update` and `tasks/cancel`,
        /// and its work stops.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ttl_ms: Option<u64>,
        /// `tasks/get` of this task answers something no client can read as a task: a
        /// result with `"status": "exploded"`, written straight to stdout with the
        /// request's id, and no proper answer after it (stdio binary only; the other
        /// runners answer as usual).
        #[serde(default)]
        garbage_get: bool,
    },
    /// End every open `subscriptions/listen` request (2026-07-28 clients) with its final
    /// result, as a server restarting its notification machinery would; a client must open
    /// its listens again. With `hold`, new listen requests wait before the server sees them
    /// (HTTP runners) until a [`Behavior::ReleaseListens`] call, so that changes made
    /// meanwhile reach no listen. Returns `{"ended": N}`.
    EndListens {
        /// Hold new listen requests back until [`Behavior::ReleaseListens`].
        #[serde(default)]
        hold: bool,
    },
    /// Let the listen requests [`Behavior::EndListens`] held back through, and new ones
    /// from now on. Returns `{"released": N}`, the requests that were waiting.
    ReleaseListens,
    /// Make every open `subscriptions/listen` stream go silent without closing, as a frozen
    /// server or a proxy holding a dead upstream does: over HTTP the stream sends nothing
    /// more, not even keep-alives, until the server stops; in every runner the listens
    /// get no more notifications. Listens opened afterwards are served as usual. Returns
    /// `{"silenced": N}`.
    SilenceListens,
    /// Emit an event of type `name` (the Events extension): its `data` is `data` (an
    /// object) with the call's arguments added. Returns the occurrence, with its cursor.
    EmitEvent {
        /// The event type.
        name: String,
        /// The event's data, before the call's arguments are added.
        #[serde(default)]
        data: Value,
    },
    /// Forget every event but the latest `keep`: a cursor from before them is answered
    /// `truncated: true` (with `keep = 0`, an expired cursor; otherwise a truncated
    /// replay). Returns `{"forgotten": N}`.
    ForgetEvents {
        /// How many of the latest events are kept.
        keep: usize,
    },
    /// Kill every open `events/stream` push stream: ended by the server (its final
    /// result), or with `silent`, kept open but sending nothing more, not even heartbeats.
    /// Returns `{"streams": N}`, the streams open at that moment.
    EndEventStreams {
        /// Keep the streams open and silent instead of ending them.
        #[serde(default)]
        silent: bool,
    },
}

/// The default [`Behavior::Log`] `count`.
fn one() -> u32 {
    1
}

/// What [`Behavior::BrokenReply`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReplyFault {
    /// A response with both `result` and `error`.
    ResultAndError,
    /// A response nested deeper than JSON parsers accept (1,000 levels).
    TooDeep,
    /// A response with bytes that are not UTF-8.
    InvalidUtf8,
    /// A line that is not JSON at all.
    NotJson,
    /// A response cut off before its end: an object never closed.
    Unterminated,
}

impl ReplyFault {
    /// The line (without the newline) answering request `id` (its JSON text).
    pub fn line(self, id: &str) -> Vec<u8> {
        match self {
            Self::ResultAndError => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}},"error":{{"code":-32603,"message":"both"}}}}"#
            )
            .into_bytes(),
            Self::TooDeep => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"deep":{}{}}}}}"#,
                "[".repeat(1000),
                "]".repeat(1000)
            )
            .into_bytes(),
            Self::InvalidUtf8 => {
                let mut line = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
                )
                .into_bytes();
                line.extend_from_slice(&[0xff, 0xfe, 0x80]);
                line.extend_from_slice(br#""}]}}"#);
                line
            }
            Self::NotJson => format!("reply to {id}: this is not JSON").into_bytes(),
            Self::Unterminated => {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":["#).into_bytes()
            }
        }
    }
}

impl Behavior {
    /// The `kind` name used in files.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Echo => "echo",
            Self::Structured { .. } => "structured",
            Self::Error { .. } => "error",
            Self::Sleep { .. } => "sleep",
            Self::Barrier { .. } => "barrier",
            Self::Progress { .. } => "progress",
            Self::SlowProgress { .. } => "slow_progress",
            Self::ElicitForm { .. } => "elicit_form",
            Self::ElicitUrl { .. } => "elicit_url",
            Self::ElicitRaw { .. } => "elicit_raw",
            Self::ListRoots => "list_roots",
            Self::ChangeTools { .. } => "change_tools",
            Self::ChangePrompts { .. } => "change_prompts",
            Self::ChangeResources { .. } => "change_resources",
            Self::UpdateResource { .. } => "update_resource",
            Self::Sample { .. } => "sample",
            Self::SampleRaw { .. } => "sample_raw",
            Self::Result { .. } => "result",
            Self::Log { .. } => "log",
            Self::Exit { .. } => "exit",
            Self::AnswerThenExit { .. } => "answer_then_exit",
            Self::Large { .. } => "large",
            Self::ReportEnv => "report_env",
            Self::BrokenReply { .. } => "broken_reply",
            Self::Task { .. } => "task",
            Self::EndListens { .. } => "end_listens",
            Self::ReleaseListens => "release_listens",
            Self::SilenceListens => "silence_listens",
            Self::EmitEvent { .. } => "emit_event",
            Self::ForgetEvents { .. } => "forget_events",
            Self::EndEventStreams { .. } => "end_event_streams",
        }
    }
}

/// A static resource; `resources/read` returns `text`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ResourceSpec {
    /// `uri`.
    pub uri: String,
    /// `name`.
    pub name: String,
    /// `title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `mimeType` (default `text/plain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The contents returned by `resources/read`.
    #[serde(default)]
    pub text: String,
    /// When set, `resources/read` returns the value of this environment variable of the
    /// server process instead of `text` (empty when unset): tells apart which process (which
    /// environment, which machine) served a read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_from_env: Option<String>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl ResourceSpec {
    /// A text resource.
    pub fn new(uri: impl Into<String>, name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            text: text.into(),
            text_from_env: None,
            meta: None,
        }
    }

    /// Reads return the server process's value of the environment variable `name` instead
    /// of the text.
    #[must_use]
    pub fn with_text_from_env(mut self, name: impl Into<String>) -> Self {
        self.text_from_env = Some(name.into());
        self
    }

    /// Set the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Set the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// A resource template; reading a URI that no static resource has returns the URI itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ResourceTemplateSpec {
    /// `uriTemplate`.
    pub uri_template: String,
    /// `name`.
    pub name: String,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `mimeType`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// What `completion/complete` offers for each argument of the template (a
    /// `ref/resource` naming this `uriTemplate`): the values starting with what the user
    /// typed, in this order. An argument not listed here is an "invalid params" error.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub completions: BTreeMap<String, Vec<String>>,
}

impl ResourceTemplateSpec {
    /// A template.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri_template: uri_template.into(),
            name: name.into(),
            description: None,
            mime_type: None,
            completions: BTreeMap::new(),
        }
    }

    /// Offer `values` as completions of `argument` (replacing any given before).
    #[must_use]
    pub fn with_completions<V: Into<String>>(
        mut self,
        argument: impl Into<String>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        self.completions.insert(
            argument.into(),
            values.into_iter().map(Into::into).collect(),
        );
        self
    }
}

/// A prompt; `prompts/get` returns one user message with `text`, where `{arg}` is
/// replaced by the argument's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PromptSpec {
    /// `name`.
    pub name: String,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Argument names (all required).
    #[serde(default)]
    pub arguments: Vec<String>,
    /// The message text.
    #[serde(default)]
    pub text: String,
    /// What `completion/complete` offers for each argument (a `ref/prompt` naming this
    /// prompt): the values starting with what the user typed, in this order. An argument
    /// not listed here is an "invalid params" error.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub completions: BTreeMap<String, Vec<String>>,
}

impl PromptSpec {
    /// A prompt with a message `text`.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: None,
            arguments: Vec::new(),
            text: text.into(),
            completions: BTreeMap::new(),
        }
    }

    /// Offer `values` as completions of `argument` (replacing any given before).
    #[must_use]
    pub fn with_completions<V: Into<String>>(
        mut self,
        argument: impl Into<String>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        self.completions.insert(
            argument.into(),
            values.into_iter().map(Into::into).collect(),
        );
        self
    }

    /// Add a required argument.
    #[must_use]
    pub fn with_argument(mut self, name: impl Into<String>) -> Self {
        self.arguments.push(name.into());
        self
    }
}

/// Server-level misbehaviour. Which runner honours what is listed per field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Faults {
    /// Delay the `initialize` answer by this many milliseconds (all runners).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_delay_ms: Option<u64>,
    /// Delay each `tools/list` page answer by this many milliseconds (all runners).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_delay_ms: Option<u64>,
    /// Never answer `initialize` (all runners).
    pub hang_initialize: bool,
    /// Exit with this code right after startup, before reading stdin (binary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_at_startup: Option<i32>,
    /// Write this text to stderr at startup (binary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// Write a line of non-JSON garbage to stdout before serving (binary, in process).
    pub garbage_stdout: bool,
    /// Write one non-JSON line of this many bytes (plus `\n`) to stdout before serving
    /// (binary, in process).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub huge_line: Option<usize>,
    /// Write this many lines to stderr at startup (binary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flood_stderr: Option<usize>,
    /// Paginate `tools/list`, `resources/list`, `resources/templates/list` and
    /// `prompts/list` in pages of this size (all runners).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_size: Option<usize>,
    /// Every list page carries the same `nextCursor` (`"repeat"`), forever (all runners).
    pub repeating_cursor: bool,
    /// Lists never end: after the real items, each page holds one synthetic item
    /// (`endless_<n>`) and a fresh cursor (all runners).
    pub endless_pages: bool,
    /// Ignore SIGTERM, and keep running after stdin closes, until SIGKILL (binary).
    pub ignore_sigterm: bool,
    /// Spawn `sleep 1000` in the server's process group at startup and write its pid
    /// to this file (binary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spawn_grandchild: Option<PathBuf>,
    /// Answer `initialize` with this `protocolVersion`, whatever the client asked for and
    /// whether or not it is a real version (e.g. `"1999-01-01"`, or an older one such as
    /// `"2025-06-18"`), and accept only it afterwards. It must be dated before 2026-07-28
    /// (later revisions have no `initialize`) (all runners; over HTTP only known versions
    /// work: rmcp's server answers 400 to requests whose `MCP-Protocol-Version` header
    /// names a version it does not know, which includes `notifications/initialized`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Never answer `server/discover` (the 2026-07-28 era's opening request) and go on
    /// serving, like a 2025-era server that ignores requests it does not know (the binary
    /// over stdio drops the request before rmcp sees it; over HTTP its POST hangs until the
    /// server stops).
    pub ignore_discover: bool,
    /// Answer `server/discover` with JSON-RPC error -32601 (method not found) and go on
    /// serving, as 2025-era servers of the TypeScript and Python SDKs do (binary over
    /// stdio). Without a discover fault the fake server answers as rmcp 3.x servers of the
    /// 2025 era do: "unsupported protocol version", listing the versions it speaks, and it
    /// goes on waiting for `initialize`.
    pub refuse_discover: bool,
    /// Exit (status 1, "expected initialize request" on stderr) when the first request is
    /// `server/discover`, as servers built on rmcp releases before 2026-07-28 do: a client
    /// must start such a server again to speak `initialize` to it (binary over stdio).
    pub close_on_discover: bool,
    /// Over the legacy SSE transport, end each event stream once it carried this many
    /// `message` events (the `endpoint` event not counted), as a flaky network would
    /// ([`crate::SseFakeServer`], in the test's process or `mcp-fake-server --http ADDR
    /// --sse`). Whether the session survives is [`crate::SseOptions::keep_sessions`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sse_drop_after: Option<u64>,
    /// Answer every `subscriptions/listen` request with "method not found", as a 2026-07-28
    /// server without listens does (all runners; the refused request is still recorded).
    pub refuse_listen: bool,
    /// Send an SSE keep-alive comment on each idle response stream this often, as rmcp's
    /// servers do every 15 s by default ([`crate::HttpFakeServer`], `--http` binary;
    /// default: none, no keep-alives).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sse_keep_alive_ms: Option<u64>,
}

impl Faults {
    /// No faults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set [`Faults::init_delay_ms`].
    #[must_use]
    pub fn with_init_delay_ms(mut self, ms: u64) -> Self {
        self.init_delay_ms = Some(ms);
        self
    }

    /// Set [`Faults::list_delay_ms`].
    #[must_use]
    pub fn with_list_delay_ms(mut self, ms: u64) -> Self {
        self.list_delay_ms = Some(ms);
        self
    }

    /// Set [`Faults::ignore_discover`].
    #[must_use]
    pub fn with_ignore_discover(mut self) -> Self {
        self.ignore_discover = true;
        self
    }

    /// Set [`Faults::refuse_discover`].
    #[must_use]
    pub fn with_refuse_discover(mut self) -> Self {
        self.refuse_discover = true;
        self
    }

    /// Set [`Faults::close_on_discover`].
    #[must_use]
    pub fn with_close_on_discover(mut self) -> Self {
        self.close_on_discover = true;
        self
    }

    /// Set [`Faults::refuse_listen`].
    #[must_use]
    pub fn with_refuse_listen(mut self) -> Self {
        self.refuse_listen = true;
        self
    }

    /// Set [`Faults::sse_keep_alive_ms`].
    #[must_use]
    pub fn with_sse_keep_alive_ms(mut self, ms: u64) -> Self {
        self.sse_keep_alive_ms = Some(ms);
        self
    }

    /// Set [`Faults::hang_initialize`].
    #[must_use]
    pub fn with_hang_initialize(mut self) -> Self {
        self.hang_initialize = true;
        self
    }

    /// Set [`Faults::exit_at_startup`].
    #[must_use]
    pub fn with_exit_at_startup(mut self, code: i32) -> Self {
        self.exit_at_startup = Some(code);
        self
    }

    /// Set [`Faults::stderr`].
    #[must_use]
    pub fn with_stderr(mut self, text: impl Into<String>) -> Self {
        self.stderr = Some(text.into());
        self
    }

    /// Set [`Faults::garbage_stdout`].
    #[must_use]
    pub fn with_garbage_stdout(mut self) -> Self {
        self.garbage_stdout = true;
        self
    }

    /// Set [`Faults::huge_line`].
    #[must_use]
    pub fn with_huge_line(mut self, bytes: usize) -> Self {
        self.huge_line = Some(bytes);
        self
    }

    /// Set [`Faults::flood_stderr`].
    #[must_use]
    pub fn with_flood_stderr(mut self, lines: usize) -> Self {
        self.flood_stderr = Some(lines);
        self
    }

    /// Set [`Faults::page_size`].
    #[must_use]
    pub fn with_page_size(mut self, size: usize) -> Self {
        self.page_size = Some(size);
        self
    }

    /// Set [`Faults::repeating_cursor`].
    #[must_use]
    pub fn with_repeating_cursor(mut self) -> Self {
        self.repeating_cursor = true;
        self
    }

    /// Set [`Faults::endless_pages`].
    #[must_use]
    pub fn with_endless_pages(mut self) -> Self {
        self.endless_pages = true;
        self
    }

    /// Set [`Faults::ignore_sigterm`].
    #[must_use]
    pub fn with_ignore_sigterm(mut self) -> Self {
        self.ignore_sigterm = true;
        self
    }

    /// Set [`Faults::spawn_grandchild`].
    #[must_use]
    pub fn with_spawn_grandchild(mut self, pid_file: impl Into<PathBuf>) -> Self {
        self.spawn_grandchild = Some(pid_file.into());
        self
    }

    /// Set [`Faults::protocol_version`].
    #[must_use]
    pub fn with_protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = Some(version.into());
        self
    }

    /// Set [`Faults::sse_drop_after`].
    #[must_use]
    pub fn with_sse_drop_after(mut self, messages: u64) -> Self {
        self.sse_drop_after = Some(messages);
        self
    }
}

/// Files a server writes so tests can check what happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Recording {
    /// Write the server's pid (decimal, then `\n`) here at startup (binary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid_file: Option<PathBuf>,
    /// Append one JSON line `{"method": ..., "params": ...}` per request received, and
    /// per `notifications/cancelled` (all runners).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_log: Option<PathBuf>,
    /// How many of the latest requests [`FakeServer::requests`](crate::FakeServer::requests)
    /// keeps in memory (default [`DEFAULT_KEPT_REQUESTS`]); older ones are dropped, still
    /// counted by [`FakeServer::request_counts`](crate::FakeServer::request_counts) and
    /// still written to [`Recording::request_log`]. A soak test that makes millions of
    /// calls stays at a fixed size; `usize::MAX` keeps everything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_requests: Option<usize>,
}

/// Requests a fake server keeps in memory unless told otherwise: 1,024 (about 1.6 MB of
/// tool calls).
pub const DEFAULT_KEPT_REQUESTS: usize = 1024;

impl Recording {
    /// Record nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set [`Recording::pid_file`].
    #[must_use]
    pub fn with_pid_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.pid_file = Some(path.into());
        self
    }

    /// Set [`Recording::request_log`].
    #[must_use]
    pub fn with_request_log(mut self, path: impl Into<PathBuf>) -> Self {
        self.request_log = Some(path.into());
        self
    }

    /// Set [`Recording::kept_requests`].
    #[must_use]
    pub fn with_kept_requests(mut self, kept: usize) -> Self {
        self.kept_requests = Some(kept);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn every_behavior() -> Scenario {
        let behaviors = vec![
            Behavior::Echo,
            Behavior::Structured {
                value: json!({"a": [1, 2]}),
            },
            Behavior::Error {
                message: "m".into(),
            },
            Behavior::Sleep { ms: 5 },
            Behavior::Barrier {
                name: "b".into(),
                parties: 3,
            },
            Behavior::Progress { steps: 2 },
            Behavior::ElicitForm {
                message: "m".into(),
                schema: json!({"type": "object"}),
            },
            Behavior::ElicitUrl {
                message: "m".into(),
                url: "https://example.invalid".into(),
                elicitation_id: "e".into(),
            },
            Behavior::ElicitRaw {
                params: json!({"mode": "form"}),
            },
            Behavior::ListRoots,
            Behavior::ChangeTools {
                add: vec![ToolSpec::echo("new")],
                remove: vec!["t0".into()],
            },
            Behavior::ChangePrompts {
                add: vec![PromptSpec::new("q", "hi")],
                remove: vec!["p".into()],
            },
            Behavior::ChangeResources {
                add: vec![ResourceSpec::new("fake://s", "s", "text")],
                remove: vec!["fake://r".into()],
            },
            Behavior::Sample {
                prompt: "p".into(),
                max_tokens: 5,
                tools: vec!["t".into()],
            },
            Behavior::Log {
                level: "info".into(),
                logger: Some("l".into()),
                data: json!({"d": 1}),
                count: 2,
            },
            Behavior::SampleRaw {
                params: json!({"maxTokens": 1}),
            },
            Behavior::Result {
                result: json!({"content": []}),
            },
            Behavior::Exit { code: 3 },
            Behavior::Large { bytes: 10 },
            Behavior::ReportEnv,
            Behavior::Task {
                work_ms: 10,
                steps: 2,
                end: TaskEnd::Fail {
                    code: -32001,
                    message: "m".into(),
                },
                ask: Some(TaskAsk::new("m", json!({"type": "object"}))),
                poll_interval_ms: Some(0),
                ttl_ms: Some(86_400_000),
                garbage_get: true,
            },
            Behavior::Task {
                work_ms: 0,
                steps: 0,
                end: TaskEnd::ToolError {
                    message: "m".into(),
                },
                ask: None,
                poll_interval_ms: None,
                ttl_ms: None,
                garbage_get: false,
            },
        ];
        let mut s = Scenario::new("all")
            .with_faults(
                Faults::new()
                    .with_init_delay_ms(1)
                    .with_page_size(2)
                    .with_spawn_grandchild("/tmp/g")
                    .with_stderr("e")
                    .with_protocol_version("1999-01-01"),
            )
            .with_record(Recording::new().with_pid_file("/tmp/p"))
            .with_resource(ResourceSpec::new("fake://r", "r", "text"))
            .with_resource_template(
                ResourceTemplateSpec::new("fake://{x}", "t").with_completions("x", ["1", "2"]),
            )
            .with_prompt(
                PromptSpec::new("p", "hi {a}")
                    .with_argument("a")
                    .with_completions("a", ["Ada"]),
            )
            .with_capabilities(
                CapabilityFlags::default()
                    .with_logging(true)
                    .with_completions(true)
                    .with_tasks(true),
            );
        for (i, b) in behaviors.into_iter().enumerate() {
            s = s.with_tool(
                ToolSpec::new(format!("t{i}"), b)
                    .with_annotations(json!({"readOnlyHint": true}))
                    .with_meta(json!({"k": "v"})),
            );
        }
        s
    }

    #[test]
    fn toml_and_json_round_trip_every_behavior() {
        let s = every_behavior();
        let toml_text = toml::to_string(&s).unwrap();
        assert_eq!(Scenario::from_toml_str(&toml_text).unwrap(), s);
        let json_text = serde_json::to_string(&s).unwrap();
        assert_eq!(Scenario::from_json_str(&json_text).unwrap(), s);
    }

    #[test]
    fn the_documented_toml_example_parses() {
        let s = Scenario::from_toml_str(
            r#"
instructions = "Use echo."
[server_info]
name = "files"
[capabilities]
tools_list_changed = true
[faults]
page_size = 2
[[tools]]
name = "echo"
annotations = { readOnlyHint = true }
[[tools]]
name = "nap"
behavior = { kind = "sleep", ms = 100 }
"#,
        )
        .unwrap();
        assert_eq!(s.server_info.version, DEFAULT_VERSION);
        assert_eq!(s.tools[0].behavior, Behavior::Echo);
        assert_eq!(s.tools[1].behavior, Behavior::Sleep { ms: 100 });
        assert_eq!(s.faults.page_size, Some(2));
    }

    #[test]
    fn unknown_fields_and_kinds_are_errors_naming_them() {
        let err = Scenario::from_toml_str("[[tools]]\nname = \"x\"\nbehaviour = {}\n").unwrap_err();
        assert!(err.is_scenario());
        assert!(err.to_string().contains("behaviour"), "{err}");
        let err =
            Scenario::from_json_str(r#"{"tools": [{"name": "x", "behavior": {"kind": "dance"}}]}"#)
                .unwrap_err();
        assert!(err.to_string().contains("dance"), "{err}");
    }

    #[test]
    fn a_log_behavior_sends_one_message_unless_told_otherwise() {
        let s = Scenario::from_json_str(
            r#"{"tools": [{"name": "l", "behavior": {"kind": "log", "level": "info", "data": "x"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            s.tools[0].behavior,
            Behavior::Log {
                level: "info".into(),
                logger: None,
                data: json!("x"),
                count: 1,
            }
        );
    }

    #[test]
    fn from_path_picks_the_format_by_extension() {
        let dir = tempfile::tempdir().unwrap();
        let json_path = dir.path().join("s.json");
        every_behavior().write_json(&json_path).unwrap();
        assert_eq!(Scenario::from_path(&json_path).unwrap(), every_behavior());
        let yaml = dir.path().join("s.yaml");
        std::fs::write(&yaml, "").unwrap();
        assert!(matches!(
            Scenario::from_path(&yaml),
            Err(Error::ScenarioExtension { .. })
        ));
        let missing = Scenario::from_path(dir.path().join("nope.toml")).unwrap_err();
        assert!(matches!(missing, Error::ScenarioRead { .. }));
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "tools = 3").unwrap();
        let err = Scenario::from_path(&bad).unwrap_err();
        assert!(err.to_string().contains("bad.toml"), "{err}");
    }
}
