//! Who registered a server, and what precedence that gives it.

use std::fmt;

use mcp_key::McpServerKey;

/// Precedence tier of a source, from lowest ([`Tier::DiscoveredPlugin`]) to highest
/// ([`Tier::Runtime`]). `Ord` follows precedence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Tier {
    /// Plugins found on disk; the earlier plugin wins within this tier.
    DiscoveredPlugin,
    /// Plugins selected for this session; the earlier selection wins within this tier.
    SelectedPlugin,
    /// The user's configuration; a later configuration wins within this tier.
    User,
    /// Built-in (compatibility) servers; a later registration wins within this tier.
    BuiltIn,
    /// Extensions contributed at run time; the later contribution wins within this tier.
    Runtime,
}

impl Tier {
    /// Whether the earliest registration wins within this tier (plugins) rather than the
    /// latest (everything else).
    pub fn earlier_wins(self) -> bool {
        matches!(self, Tier::DiscoveredPlugin | Tier::SelectedPlugin)
    }

    /// A short human-readable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::DiscoveredPlugin => "discovered plugin",
            Tier::SelectedPlugin => "selected plugin",
            Tier::User => "user config",
            Tier::BuiltIn => "built-in",
            Tier::Runtime => "runtime extension",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A registering source: its tier and a name (plugin name, config file path, extension).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Source {
    tier: Tier,
    name: String,
}

impl Source {
    /// A source in `tier` called `name`.
    pub fn new(tier: Tier, name: impl Into<String>) -> Self {
        Self {
            tier,
            name: name.into(),
        }
    }

    /// A plugin found on disk.
    pub fn discovered_plugin(name: impl Into<String>) -> Self {
        Self::new(Tier::DiscoveredPlugin, name)
    }

    /// A plugin selected for this session.
    pub fn selected_plugin(name: impl Into<String>) -> Self {
        Self::new(Tier::SelectedPlugin, name)
    }

    /// A user configuration (usually named by its file path).
    pub fn user(origin: impl Into<String>) -> Self {
        Self::new(Tier::User, origin)
    }

    /// A built-in server set.
    pub fn built_in(name: impl Into<String>) -> Self {
        Self::new(Tier::BuiltIn, name)
    }

    /// An extension contributed at run time.
    pub fn runtime(name: impl Into<String>) -> Self {
        Self::new(Tier::Runtime, name)
    }

    /// The precedence tier.
    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// The source's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}`", self.tier, self.name)
    }
}

/// Two or more registrations of one key in one tier: who won and who lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub(crate) key: McpServerKey,
    pub(crate) tier: Tier,
    pub(crate) winner: Source,
    pub(crate) losers: Vec<Source>,
}

impl Conflict {
    /// The contested key.
    pub fn key(&self) -> &McpServerKey {
        &self.key
    }

    /// The tier in which the registrations collided.
    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// The source whose registration won within the tier.
    pub fn winner(&self) -> &Source {
        &self.winner
    }

    /// The sources whose registrations lost, in registration order.
    pub fn losers(&self) -> &[Source] {
        &self.losers
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "server `{}` is registered more than once by {} sources: {} wins over ",
            self.key, self.tier, self.winner
        )?;
        for (i, loser) in self.losers.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{loser}")?;
        }
        Ok(())
    }
}

/// Why a server is not active.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VetoReason {
    /// The winning registration has `enabled = false`.
    DisabledInConfig {
        /// The source of that registration.
        source: Source,
    },
    /// A source called `disable(name)`.
    DisabledByName {
        /// The source that disabled the name.
        source: Source,
    },
}

impl VetoReason {
    /// The source that vetoed the server.
    pub fn source(&self) -> &Source {
        match self {
            VetoReason::DisabledInConfig { source } | VetoReason::DisabledByName { source } => {
                source
            }
        }
    }
}

impl fmt::Display for VetoReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VetoReason::DisabledInConfig { source } => {
                write!(f, "disabled with `enabled = false` by {source}")
            }
            VetoReason::DisabledByName { source } => write!(f, "disabled by name by {source}"),
        }
    }
}
