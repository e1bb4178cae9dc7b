//! The settings a server inherits from the catalog ([`ServerDefaults`]): for every one, a
//! server without its own value gets the catalog-wide one, its own value wins, and with
//! neither the setting's default applies. In code, from TOML, across layered files and
//! through the export. Table-driven: a new inheritable setting is covered by adding a row
//! to [`ROWS`] (and `every_setting_has_a_row` fails until it is).
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use mcp_catalog::{
    CatalogBuilder, Config, LoadedConfig, LogLevel, ProtocolChoice, ResolvedCatalog,
    ServerDefaults, StartupPolicy, ToolDriftPolicy, export_toml,
};
use mcp_key::{McpServerKey, ServerName};
use pretty_assertions::assert_eq;

/// One inheritable setting.
struct Row {
    /// Its key at the top level of a configuration.
    catalog_key: &'static str,
    /// Its key in a server's table.
    server_key: &'static str,
    /// The catalog-wide value the tests write, as configuration text.
    catalog_value: &'static str,
    /// A server's own value, as configuration text (differs from `catalog_value`).
    own_value: &'static str,
    /// The effective value with neither written, as the catalog's accessor gives it.
    default: &'static str,
    /// Writes `catalog_value` in code.
    set_catalog: fn(ServerDefaults) -> ServerDefaults,
    /// Writes `own_value` in code.
    set_own: fn(ServerDefaults) -> ServerDefaults,
    /// The written value as text, `None` when not written.
    get: fn(&ServerDefaults) -> Option<String>,
    /// The effective value through the catalog's accessor for this setting, as text.
    resolved: fn(&ResolvedCatalog, &McpServerKey) -> String,
}

const ROWS: &[Row] = &[
    Row {
        catalog_key: "mcp_startup",
        server_key: "startup",
        catalog_value: "lazy_when_cached",
        own_value: "eager",
        default: "eager",
        set_catalog: |d| d.with_startup_policy(StartupPolicy::LazyWhenCached),
        set_own: |d| d.with_startup_policy(StartupPolicy::Eager),
        get: |d| d.startup_policy().map(|p| p.as_str().to_owned()),
        resolved: |c, k| c.startup_policy(k).as_str().to_owned(),
    },
    Row {
        catalog_key: "mcp_protocol",
        server_key: "protocol",
        catalog_value: "2025-11-25",
        own_value: "2026-07-28",
        default: "auto",
        set_catalog: |d| d.with_protocol(ProtocolChoice::V2025_11_25),
        set_own: |d| d.with_protocol(ProtocolChoice::V2026_07_28),
        get: |d| d.protocol().map(|p| p.as_str().to_owned()),
        resolved: |c, k| c.protocol(k).as_str().to_owned(),
    },
    Row {
        catalog_key: "tool_drift",
        server_key: "tool_drift",
        catalog_value: "block",
        own_value: "notice",
        default: "reapprove",
        set_catalog: |d| d.with_tool_drift(ToolDriftPolicy::Block),
        set_own: |d| d.with_tool_drift(ToolDriftPolicy::Notice),
        get: |d| d.tool_drift().map(|p| p.as_str().to_owned()),
        resolved: |c, k| c.tool_drift(k).as_str().to_owned(),
    },
    Row {
        catalog_key: "log_level",
        server_key: "log_level",
        catalog_value: "info",
        own_value: "warning",
        default: "none",
        set_catalog: |d| d.with_log_level(LogLevel::Info),
        set_own: |d| d.with_log_level(LogLevel::Warning),
        get: |d| d.log_level().map(|l| l.as_str().to_owned()),
        resolved: |c, k| c.log_level(k).map_or("none", LogLevel::as_str).to_owned(),
    },
];

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(ServerName::new(name).unwrap())
}

fn load(text: &str, origin: &str) -> LoadedConfig {
    let loaded = Config::from_toml_str(text, origin).unwrap();
    assert_eq!(loaded.warnings(), &[], "{origin}:\n{text}");
    loaded
}

/// A configuration with three servers: `plain` writes nothing, `own` writes the row's own
/// value, and (when `catalog` is true) the catalog-wide value at the top.
fn text(row: &Row, catalog: bool) -> String {
    let top = if catalog {
        format!("{} = \"{}\"\n", row.catalog_key, row.catalog_value)
    } else {
        String::new()
    };
    format!(
        "{top}[mcp_servers.plain]\ncommand = \"a\"\n\n\
         [mcp_servers.own]\ncommand = \"b\"\n{} = \"{}\"\n",
        row.server_key, row.own_value
    )
}

/// `(row's key, value)` for every row, so a failure names the setting.
fn each(get: impl Fn(&Row) -> Option<String>) -> Vec<(&'static str, Option<String>)> {
    ROWS.iter().map(|row| (row.server_key, get(row))).collect()
}

fn expected(value: impl Fn(&Row) -> Option<&'static str>) -> Vec<(&'static str, Option<String>)> {
    each(|row| value(row).map(str::to_owned))
}

#[test]
fn every_setting_has_a_row() {
    // One `None` per field of the struct (its derived Debug): a field without a row fails.
    let fields = format!("{:?}", ServerDefaults::new())
        .matches(": None")
        .count();
    assert_eq!(fields, ROWS.len());
    // And every row writes its own field: with every row's value set, nothing is left out.
    let all = ROWS
        .iter()
        .fold(ServerDefaults::new(), |d, row| (row.set_catalog)(d));
    assert_eq!(format!("{all:?}").matches("None").count(), 0, "{all:?}");
    assert_eq!(
        each(|row| (row.get)(&all)),
        expected(|r| Some(r.catalog_value))
    );
}

#[test]
fn in_code_a_server_inherits_the_catalog_value_and_its_own_wins() {
    let none = ServerDefaults::new();
    for row in ROWS {
        assert_ne!(row.catalog_value, row.own_value, "{}", row.server_key);
    }
    let catalog = ROWS.iter().fold(none, |d, row| (row.set_catalog)(d));
    let own = ROWS.iter().fold(none, |d, row| (row.set_own)(d));

    let inherited = none.inherit(&catalog);
    assert_eq!(
        each(|row| (row.get)(&inherited)),
        expected(|r| Some(r.catalog_value))
    );
    let wins = own.inherit(&catalog);
    assert_eq!(
        each(|row| (row.get)(&wins)),
        expected(|r| Some(r.own_value))
    );
    let alone = own.inherit(&none);
    assert_eq!(
        each(|row| (row.get)(&alone)),
        expected(|r| Some(r.own_value))
    );
    let neither = none.inherit(&none);
    assert_eq!(each(|row| (row.get)(&neither)), expected(|_| None));

    // One setting at a time: the others stay unwritten, and each row's own value wins
    // over the catalog's alone.
    for row in ROWS {
        let catalog = (row.set_catalog)(none);
        let own = (row.set_own)(none);
        assert_eq!(
            (row.get)(&none.inherit(&catalog)).as_deref(),
            Some(row.catalog_value)
        );
        assert_eq!(
            (row.get)(&own.inherit(&catalog)).as_deref(),
            Some(row.own_value)
        );
        let others = |d: &ServerDefaults| {
            ROWS.iter()
                .filter(|other| other.server_key != row.server_key)
                .filter_map(|other| (other.get)(d))
                .collect::<Vec<_>>()
        };
        assert_eq!(others(&own.inherit(&catalog)), Vec::<String>::new());
    }
}

#[test]
fn from_toml_a_server_inherits_the_catalog_value_and_its_own_wins() {
    for row in ROWS {
        let loaded = load(&text(row, true), "c.toml");
        let config = loaded.config();
        assert_eq!(
            (row.get)(config.server_defaults()).as_deref(),
            Some(row.catalog_value),
            "{}",
            row.catalog_key
        );
        let servers = config.servers();
        let plain = &servers[&ServerName::new("plain").unwrap()];
        let own = &servers[&ServerName::new("own").unwrap()];
        assert_eq!((row.get)(plain.overrides()), None, "{}", row.server_key);
        assert_eq!(
            (row.get)(own.overrides()).as_deref(),
            Some(row.own_value),
            "{}",
            row.server_key
        );

        let catalog = CatalogBuilder::new().with_user_config(loaded).build();
        let settings = |name: &str| (row.get)(&catalog.server_settings(&key(name)));
        let seen = [
            (settings("plain"), (row.resolved)(&catalog, &key("plain"))),
            (settings("own"), (row.resolved)(&catalog, &key("own"))),
            (settings("absent"), (row.resolved)(&catalog, &key("absent"))),
        ];
        let inherited = (
            Some(row.catalog_value.to_owned()),
            row.catalog_value.to_owned(),
        );
        let own = (Some(row.own_value.to_owned()), row.own_value.to_owned());
        assert_eq!(
            seen,
            [inherited.clone(), own, inherited],
            "{}",
            row.server_key
        );
        assert_eq!(
            (row.get)(catalog.server_defaults()).as_deref(),
            Some(row.catalog_value)
        );
    }
}

#[test]
fn with_no_catalog_value_a_server_gets_the_default_or_its_own() {
    for row in ROWS {
        let catalog = CatalogBuilder::new()
            .with_user_config(load(&text(row, false), "c.toml"))
            .build();
        let seen = [
            (
                (row.get)(&catalog.server_settings(&key("plain"))),
                (row.resolved)(&catalog, &key("plain")),
            ),
            (
                (row.get)(&catalog.server_settings(&key("own"))),
                (row.resolved)(&catalog, &key("own")),
            ),
        ];
        assert_eq!(
            seen,
            [
                (None, row.default.to_owned()),
                (Some(row.own_value.to_owned()), row.own_value.to_owned()),
            ],
            "{}",
            row.server_key
        );
    }
}

#[test]
fn in_code_config_and_server_hold_the_same_struct() {
    let none = ServerDefaults::new();
    let catalog_wide = ROWS.iter().fold(none, |d, row| (row.set_catalog)(d));
    let own = ROWS.iter().fold(none, |d, row| (row.set_own)(d));
    let config = Config::new()
        .with_server_defaults(catalog_wide)
        .with_server(
            ServerName::new("plain").unwrap(),
            mcp_catalog::ServerConfig::stdio("a"),
        )
        .with_server(
            ServerName::new("own").unwrap(),
            mcp_catalog::ServerConfig::stdio("b").with_overrides(own),
        );
    let catalog = CatalogBuilder::new()
        .with_user_config(LoadedConfig::new("code", config))
        .build();
    let resolved = |name: &str| each(|row| Some((row.resolved)(&catalog, &key(name))));
    assert_eq!(resolved("plain"), expected(|r| Some(r.catalog_value)));
    assert_eq!(resolved("own"), expected(|r| Some(r.own_value)));
}

#[test]
fn a_later_file_replaces_only_the_settings_it_writes() {
    for row in ROWS {
        let first = load(&text(row, true), "global.toml");
        let silent = load("", "project.toml");
        let catalog = CatalogBuilder::new()
            .with_user_config(first.clone())
            .with_user_config(silent)
            .build();
        assert_eq!(
            (row.resolved)(&catalog, &key("plain")),
            row.catalog_value,
            "{}: a file that does not write it keeps the earlier value",
            row.catalog_key
        );

        let later = format!("{} = \"{}\"\n", row.catalog_key, row.own_value);
        let catalog = CatalogBuilder::new()
            .with_user_config(first)
            .with_user_config(load(&later, "project.toml"))
            .build();
        assert_eq!(
            (row.resolved)(&catalog, &key("plain")),
            row.own_value,
            "{}: the later file's value wins",
            row.catalog_key
        );
    }
}

#[test]
fn the_export_writes_every_setting_back() {
    for row in ROWS {
        let loaded = load(&text(row, true), "c.toml");
        let written = export_toml(std::slice::from_ref(&loaded));
        let catalog_line = format!("{} = \"{}\"", row.catalog_key, row.catalog_value);
        let own_line = format!("{} = \"{}\"", row.server_key, row.own_value);
        assert!(
            written.contains(&catalog_line),
            "{catalog_line}:\n{written}"
        );
        assert!(written.contains(&own_line), "{own_line}:\n{written}");
        let back = load(&written, "exported.toml");
        assert_eq!(
            back.config().server_defaults(),
            loaded.config().server_defaults()
        );
        assert_eq!(
            back.config().servers()[&ServerName::new("own").unwrap()].overrides(),
            loaded.config().servers()[&ServerName::new("own").unwrap()].overrides()
        );
    }
}
