//! Typed reads of spanned TOML values, recording an actionable error on mismatch.

use std::collections::BTreeMap;
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::diagnostic::{ConfigErrorKind, Scope};
use crate::formats::collect::Collector;
use crate::model::log_level::LogLevel;
use crate::model::policy::{ProtocolChoice, StartupPolicy, ToolDriftPolicy};
use crate::model::server::{ApprovalMode, ToolExposure};

pub(crate) type Value<'i> = Spanned<DeValue<'i>>;

/// Reads values of one scope (a server, an environment, the document).
pub(crate) struct Reader<'c, 'a> {
    pub(crate) cx: &'c mut Collector<'a>,
    pub(crate) scope: Scope,
}

impl Reader<'_, '_> {
    pub(crate) fn error(
        &mut self,
        field: &str,
        offset: usize,
        kind: ConfigErrorKind,
        message: impl Into<String>,
        hint: Option<String>,
    ) {
        self.cx
            .error(&self.scope, Some(field), offset, kind, message, hint);
    }

    fn wrong_type(&mut self, field: &str, value: &Value<'_>, expected: &str, example: String) {
        self.error(
            field,
            value.span().start,
            ConfigErrorKind::WrongType,
            format!("expected {expected}, found {}", type_name(value)),
            Some(format!("write it as {example}")),
        );
    }

    pub(crate) fn string(&mut self, field: &str, value: &Value<'_>) -> Option<String> {
        match value.get_ref() {
            DeValue::String(s) => Some(s.to_string()),
            _ => {
                self.wrong_type(field, value, "a string", format!("`{field} = \"...\"`"));
                None
            }
        }
    }

    /// A string that must not be empty.
    pub(crate) fn non_empty_string(&mut self, field: &str, value: &Value<'_>) -> Option<String> {
        let s = self.string(field, value)?;
        if s.trim().is_empty() {
            self.error(
                field,
                value.span().start,
                ConfigErrorKind::InvalidValue,
                format!("`{field}` is empty"),
                Some("set it or remove the key".to_owned()),
            );
            return None;
        }
        Some(s)
    }

    /// The raw name of the server or environment being read (`<name>` otherwise).
    pub(crate) fn scope_name(&self) -> String {
        match &self.scope {
            Scope::Server(name) | Scope::Environment(name) => name.clone(),
            Scope::Document | Scope::Plugin(_) => "<name>".to_owned(),
        }
    }

    pub(crate) fn bool(&mut self, field: &str, value: &Value<'_>) -> Option<bool> {
        match value.get_ref() {
            DeValue::Boolean(b) => Some(*b),
            _ => {
                self.wrong_type(
                    field,
                    value,
                    "a boolean",
                    format!("`{field} = true` or `false`"),
                );
                None
            }
        }
    }

    pub(crate) fn string_list(&mut self, field: &str, value: &Value<'_>) -> Option<Vec<String>> {
        let Some(items) = value.get_ref().as_array() else {
            self.wrong_type(
                field,
                value,
                "an array of strings",
                format!("`{field} = [\"...\"]`"),
            );
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match item.get_ref() {
                DeValue::String(s) => out.push(s.to_string()),
                _ => {
                    ok = false;
                    let path = format!("{field}[{i}]");
                    self.wrong_type(&path, item, "a string", "a quoted string".to_owned());
                }
            }
        }
        ok.then_some(out)
    }

    pub(crate) fn table<'v, 'i>(
        &mut self,
        field: &str,
        value: &'v Value<'i>,
    ) -> Option<&'v DeTable<'i>> {
        let table = value.get_ref().as_table();
        if table.is_none() {
            let example = format!("`{field} = {{ key = \"value\" }}` or a `[...{field}]` table");
            self.wrong_type(field, value, "a table", example);
        }
        table
    }

    /// The value of a whole section (`[mcp_servers.x]`, `[environments.x]`, `[[plugins]]`),
    /// which must be a table; `header` shows how to write it.
    pub(crate) fn section<'v, 'i>(
        &mut self,
        value: &'v Value<'i>,
        header: &str,
    ) -> Option<&'v DeTable<'i>> {
        let table = value.get_ref().as_table();
        if table.is_none() {
            self.cx.error(
                &self.scope,
                None,
                value.span().start,
                ConfigErrorKind::WrongType,
                format!("expected a table, found {}", type_name(value)),
                Some(format!("write it as a `{header}` table")),
            );
        }
        table
    }

    pub(crate) fn string_map(
        &mut self,
        field: &str,
        value: &Value<'_>,
    ) -> Option<BTreeMap<String, String>> {
        let table = self.table(field, value)?;
        let mut out = BTreeMap::new();
        let mut ok = true;
        for (key, item) in table {
            match item.get_ref() {
                DeValue::String(s) => {
                    out.insert(key.get_ref().to_string(), s.to_string());
                }
                _ => {
                    ok = false;
                    let path = format!("{field}.{}", key.get_ref());
                    self.wrong_type(&path, item, "a string", "a quoted string".to_owned());
                }
            }
        }
        ok.then_some(out)
    }

    /// A positive, finite number of seconds (integer or fractional).
    pub(crate) fn seconds(&mut self, field: &str, value: &Value<'_>) -> Option<Duration> {
        self.duration(field, value, TimeUnit::Seconds)
    }

    /// A positive duration written as a number of `unit`s.
    pub(crate) fn duration(
        &mut self,
        field: &str,
        value: &Value<'_>,
        unit: TimeUnit,
    ) -> Option<Duration> {
        let (per_second, unit_name, example) = match unit {
            TimeUnit::Seconds => (1.0, "seconds", 30),
            TimeUnit::Millis => (1000.0, "milliseconds", 30_000),
        };
        let seconds = match value.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .ok()
                .map(|i| i as f64),
            DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
            _ => {
                self.wrong_type(
                    field,
                    value,
                    &format!("a number of {unit_name}"),
                    format!("`{field} = {example}`"),
                );
                return None;
            }
        };
        let duration = seconds
            .map(|s| s / per_second)
            .filter(|s| s.is_finite() && *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .filter(|d| !d.is_zero());
        if duration.is_none() {
            let shown = match value.get_ref() {
                DeValue::Integer(i) => i.to_string(),
                DeValue::Float(f) => f.to_string(),
                _ => String::new(),
            };
            self.error(
                field,
                value.span().start,
                ConfigErrorKind::InvalidTimeout,
                format!("timeout must be a positive number of {unit_name}, got {shown}"),
                Some(format!(
                    "use e.g. `{field} = {example}`, or remove it for the default"
                )),
            );
        }
        duration
    }

    pub(crate) fn approval_mode(&mut self, field: &str, value: &Value<'_>) -> Option<ApprovalMode> {
        let s = self.string(field, value)?;
        let mode = ApprovalMode::parse(&s);
        if mode.is_none() {
            self.error(
                field,
                value.span().start,
                ConfigErrorKind::UnknownApprovalMode,
                format!("unknown approval mode `{s}`"),
                Some("use one of `auto`, `prompt`, `writes`, `approve`".to_owned()),
            );
        }
        mode
    }

    /// One of a fixed set of words: `parse` reads it; an unknown one is an error naming
    /// `what` it is and the `choices`.
    fn choice<T>(
        &mut self,
        field: &str,
        value: &Value<'_>,
        what: &str,
        choices: &[&str],
        parse: fn(&str) -> Option<T>,
    ) -> Option<T> {
        let s = self.string(field, value)?;
        let parsed = parse(&s);
        if parsed.is_none() {
            let choices: Vec<String> = choices.iter().map(|c| format!("`{c}`")).collect();
            self.error(
                field,
                value.span().start,
                ConfigErrorKind::InvalidValue,
                format!("unknown {what} `{s}`"),
                Some(format!("use one of {}", choices.join(", "))),
            );
        }
        parsed
    }

    /// A `protocol` / `mcp_protocol` value.
    pub(crate) fn protocol(&mut self, field: &str, value: &Value<'_>) -> Option<ProtocolChoice> {
        let choices = ["auto", "2026-07-28", "2025-11-25"];
        self.choice(field, value, "protocol", &choices, ProtocolChoice::parse)
    }

    /// A `tool_exposure` value.
    pub(crate) fn tool_exposure(&mut self, field: &str, value: &Value<'_>) -> Option<ToolExposure> {
        let choices = ["all", "search"];
        self.choice(field, value, "tool exposure", &choices, ToolExposure::parse)
    }

    /// A `tool_drift` value.
    pub(crate) fn tool_drift(&mut self, field: &str, value: &Value<'_>) -> Option<ToolDriftPolicy> {
        let choices = ["notice", "reapprove", "block"];
        self.choice(
            field,
            value,
            "tool drift policy",
            &choices,
            ToolDriftPolicy::parse,
        )
    }

    /// A `log_level` value.
    pub(crate) fn log_level(&mut self, field: &str, value: &Value<'_>) -> Option<LogLevel> {
        let choices = LogLevel::names();
        self.choice(field, value, "log level", &choices, LogLevel::parse)
    }

    /// A `startup` / `mcp_startup` value.
    pub(crate) fn startup_policy(
        &mut self,
        field: &str,
        value: &Value<'_>,
    ) -> Option<StartupPolicy> {
        let s = self.string(field, value)?;
        let policy = StartupPolicy::parse(&s);
        if policy.is_none() {
            self.error(
                field,
                value.span().start,
                ConfigErrorKind::InvalidValue,
                format!("unknown startup policy `{s}`"),
                Some("use one of `eager`, `lazy_when_cached`".to_owned()),
            );
        }
        policy
    }

    pub(crate) fn unknown_key(&mut self, key: &Spanned<std::borrow::Cow<'_, str>>, known: &[&str]) {
        self.cx
            .unknown_key(&self.scope, key.get_ref(), key.span().start, known);
    }
}

/// The TOML type of a value, with an article, for messages.
pub(crate) fn type_name(value: &Value<'_>) -> &'static str {
    match value.get_ref() {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// The unit a duration is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimeUnit {
    /// `*_sec` keys.
    Seconds,
    /// `*_ms` keys (Codex's `startup_timeout_ms`).
    Millis,
}
