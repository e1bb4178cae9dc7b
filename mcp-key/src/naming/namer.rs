//! [`ToolNamer`]: turns (server key, raw tool name) pairs into model-visible names.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::options::{DEFAULT_TOOL_PREFIX, MIN_MAX_TOOL_NAME_LEN, NamingOptions};
use super::table::ToolNameTable;
use crate::McpServerKey;
use crate::hex::hex_encode as hex;
use crate::server_name::is_server_name_byte;

/// Hex digits of the hash suffix at each escalation level. Level 0 has no suffix; level 1
/// (8 digits) is what collisions and over-long names get; the higher levels are reached only
/// when a hashed name happens to equal another name. Lengths are capped so that at least one
/// byte of the readable name stays.
const SUFFIX_HEX: [usize; 8] = [0, 8, 12, 16, 24, 32, 48, 64];

/// Turns (server key, raw tool name) pairs into names models accept
/// (`^[A-Za-z0-9_-]{1,max_len}$`) and back, through the [`ToolNameTable`] it returns.
///
/// # The names
/// - Form: `mcp__<server>__<tool>`, or `mcp__<server>__<env>__<tool>` for an
///   environment-scoped key when [`NamingOptions::environment_namespaces`] is on. Without
///   the prefix (turned off, or the server exempt): `<server>__<tool>`.
/// - Every byte outside `[A-Za-z0-9_-]` (dots, slashes, spaces, each byte of a non-ASCII
///   character) becomes `_`. Case is kept.
/// - Entries whose names would be equal after that all get a suffix `_` + 8 hex digits of
///   SHA-256 over the raw identity (`<key text>` NUL `<raw tool>`), so none shadows another.
/// - A name longer than `max_len` is cut and gets the same suffix, so it is exactly
///   `max_len` bytes.
/// - If a suffixed name still equals another name, both get longer suffixes.
///
/// The result depends only on the set of pairs given, never on their order or on the
/// machine, and a tool's name changes only when a new entry collides with it. Duplicate
/// pairs are named once.
///
/// ```
/// use mcp_key::{McpServerKey, NamingOptions, ToolNamer};
///
/// let github: McpServerKey = "github".parse()?;
/// let namer = ToolNamer::new(NamingOptions::new());
/// let table = namer.qualify([(&github, "search"), (&github, "a.b"), (&github, "a_b")]);
///
/// assert_eq!(table.qualified_name(&github, "search"), Some("mcp__github__search"));
/// let dotted = table.qualified_name(&github, "a.b").unwrap();
/// assert!(dotted.starts_with("mcp__github__a_b_") && dotted.len() == 25);
/// assert_eq!(table.resolve(dotted), Some((&github, "a.b")));
/// # Ok::<(), mcp_key::KeyError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolNamer {
    opts: NamingOptions,
}

/// The working state of one (key, raw tool) pair during naming.
struct Slot<'a> {
    key: &'a McpServerKey,
    /// Index of `key` among the distinct keys, in key order.
    rank: usize,
    raw: &'a str,
    /// The sanitized name without a suffix, possibly longer than `max_len`.
    base: String,
    /// Index into [`SUFFIX_HEX`]; beyond its end, the count of extra salted rounds.
    level: usize,
    /// The suffixed name, once `level > 0`.
    suffixed: Option<String>,
}

impl Slot<'_> {
    /// The name at the current level.
    fn name(&self) -> &str {
        self.suffixed.as_deref().unwrap_or(&self.base)
    }
}

impl ToolNamer {
    /// A namer with these options (`max_len` raised to [`MIN_MAX_TOOL_NAME_LEN`] if smaller).
    pub fn new(mut opts: NamingOptions) -> Self {
        opts.max_len = opts.max_len.max(MIN_MAX_TOOL_NAME_LEN);
        Self { opts }
    }

    /// The options in force (with `max_len` already raised to the minimum).
    pub fn options(&self) -> &NamingOptions {
        &self.opts
    }

    /// The namespace of a server's tools: the start every name of its tools shares
    /// (`mcp__github__`, `mcp__github__devbox__` for a scoped key with environment
    /// namespaces on, `github__` without the prefix), unless the name had to be cut to
    /// `max_len`. Hosts use it to tell which server a name they cannot resolve belongs
    /// to (for example a server that is not ready, whose tools are not in the table).
    ///
    /// ```
    /// use mcp_key::{McpServerKey, NamingOptions, ToolNamer};
    ///
    /// let namer = ToolNamer::new(NamingOptions::new());
    /// let scoped: McpServerKey = "github@devbox".parse()?;
    /// assert_eq!(namer.namespace(&scoped), "mcp__github__devbox__");
    /// # Ok::<(), mcp_key::KeyError>(())
    /// ```
    pub fn namespace(&self, key: &McpServerKey) -> String {
        self.base_name(key, "")
    }

    /// Names every pair; see the type's docs for the rules.
    pub fn qualify<'a, I>(&self, tools: I) -> ToolNameTable
    where
        I: IntoIterator<Item = (&'a McpServerKey, &'a str)>,
    {
        let (keys, ids) = distinct_pairs(tools);

        let max_len = self.opts.max_len;
        let mut slots: Vec<Slot<'_>> = ids
            .into_iter()
            .map(|(rank, raw)| {
                let key = keys[rank];
                let base = self.base_name(key, raw);
                let mut slot = Slot {
                    key,
                    rank,
                    raw,
                    base,
                    level: 0,
                    suffixed: None,
                };
                if slot.base.len() > max_len {
                    slot.level = 1;
                    slot.suffixed = Some(suffixed(&slot, max_len));
                }
                slot
            })
            .collect();

        // Escalate every entry whose name is shared until all names are distinct. Each round
        // depends only on the set of names, so the result does not depend on input order.
        let order = loop {
            let mut by_name: Vec<(&str, usize)> = slots
                .iter()
                .enumerate()
                .map(|(i, s)| (s.name(), i))
                .collect();
            by_name.sort_unstable();
            let clashing = clashing_slots(&by_name);
            if clashing.is_empty() {
                break by_name.into_iter().map(|(_, i)| i).collect::<Vec<_>>();
            }
            for i in clashing {
                let slot = &mut slots[i];
                slot.level += 1;
                slot.suffixed = Some(suffixed(slot, max_len));
            }
        };

        let named = slots
            .into_iter()
            .map(|slot| (slot.suffixed.unwrap_or(slot.base), slot.rank, slot.raw))
            .collect();
        ToolNameTable::from_named(keys.into_iter().cloned().collect(), named, &order)
    }

    /// The sanitized, unsuffixed, untruncated name.
    fn base_name(&self, key: &McpServerKey, raw: &str) -> String {
        let prefixed = self.opts.prefix && !self.opts.prefix_exempt.contains(key.name());
        let env = key
            .environment()
            .filter(|_| self.opts.environment_namespaces);
        let server = key.name().as_str();
        let mut name = String::with_capacity(
            DEFAULT_TOOL_PREFIX.len()
                + server.len()
                + 4
                + env.map_or(0, |e| e.as_str().len())
                + raw.len(),
        );
        if prefixed {
            name.push_str(DEFAULT_TOOL_PREFIX);
        }
        name.push_str(server);
        name.push_str("__");
        if let Some(env) = env {
            push_sanitized(&mut name, env.as_str());
            name.push_str("__");
        }
        push_sanitized(&mut name, raw);
        name
    }
}

/// The distinct keys in key order, and the distinct (key index, raw tool) pairs in that
/// order: the canonical form of the input, whatever order it came in.
fn distinct_pairs<'a, I>(tools: I) -> (Vec<&'a McpServerKey>, Vec<(usize, &'a str)>)
where
    I: IntoIterator<Item = (&'a McpServerKey, &'a str)>,
{
    let tools: Vec<(&McpServerKey, &str)> = tools.into_iter().collect();
    // Callers usually pass each server's tools together, so only look a key up when it
    // differs from the previous one.
    let mut ranks: BTreeMap<&McpServerKey, usize> = BTreeMap::new();
    let mut last: Option<&McpServerKey> = None;
    for &(key, _) in &tools {
        if last != Some(key) {
            ranks.entry(key).or_insert(0);
            last = Some(key);
        }
    }
    for (rank, slot) in ranks.values_mut().enumerate() {
        *slot = rank;
    }
    let mut last: Option<(&McpServerKey, usize)> = None;
    let mut ids: Vec<(usize, &str)> = tools
        .into_iter()
        .map(|(key, raw)| match last {
            Some((k, rank)) if k == key => (rank, raw),
            _ => {
                // Every key was put into `ranks` above.
                let rank = ranks.get(key).copied().unwrap_or_default();
                last = Some((key, rank));
                (rank, raw)
            }
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    (ranks.into_keys().collect(), ids)
}

/// Indices of every slot whose name another slot also has, given (name, index) pairs in
/// name order.
fn clashing_slots(by_name: &[(&str, usize)]) -> Vec<usize> {
    let mut clashing = Vec::new();
    for pair in by_name.windows(2) {
        let ((a, i), (b, j)) = (pair[0], pair[1]);
        if a == b {
            if clashing.last() != Some(&i) {
                clashing.push(i);
            }
            clashing.push(j);
        }
    }
    clashing
}

/// The slot's name with a suffix for its current level (which is above 0).
fn suffixed(slot: &Slot<'_>, max_len: usize) -> String {
    let salt = slot.level.saturating_sub(SUFFIX_HEX.len() - 1);
    let digits = SUFFIX_HEX[slot.level.min(SUFFIX_HEX.len() - 1)].min(max_len - 2);
    let digest = identity_digest(slot.key, slot.raw, salt);
    let keep = slot.base.len().min(max_len - 1 - digits);
    let mut name = String::with_capacity(keep + 1 + digits);
    // `base` is ASCII, so any byte offset is a char boundary.
    name.push_str(&slot.base[..keep]);
    name.push('_');
    name.push_str(&hex(&digest)[..digits]);
    name
}

/// SHA-256 of `<key text>` NUL `<raw tool>`, with a salt appended only in the
/// astronomically unlikely case that the longest suffixes still clash.
fn identity_digest(key: &McpServerKey, raw: &str, salt: usize) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(key.to_string().as_bytes());
    hasher.update([0]);
    hasher.update(raw.as_bytes());
    if salt > 0 {
        hasher.update([0]);
        hasher.update((salt as u64).to_le_bytes());
    }
    hasher.finalize().into()
}

/// Appends `text` with every byte outside `[A-Za-z0-9_-]` replaced by `_` (so a non-ASCII
/// character becomes one `_` per byte).
fn push_sanitized(out: &mut String, text: &str) {
    let mut clean_from = 0;
    for (i, ch) in text.char_indices() {
        if !(ch.is_ascii() && is_server_name_byte(ch as u8)) {
            out.push_str(&text[clean_from..i]);
            out.extend(std::iter::repeat_n('_', ch.len_utf8()));
            clean_from = i + ch.len_utf8();
        }
    }
    out.push_str(&text[clean_from..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ServerName;
    use pretty_assertions::assert_eq;

    fn key(s: &str) -> McpServerKey {
        s.parse().unwrap()
    }

    fn h(identity: &str, digits: usize) -> String {
        hex(&Sha256::digest(identity.as_bytes()))[..digits].to_owned()
    }

    fn names(namer: &ToolNamer, pairs: &[(&McpServerKey, &str)]) -> Vec<String> {
        let table = namer.qualify(pairs.iter().copied());
        pairs
            .iter()
            .map(|(k, t)| table.qualified_name(k, t).unwrap().to_owned())
            .collect()
    }

    #[test]
    fn default_forms() {
        let (plain, scoped) = (key("github"), key("github@eu.devbox"));
        let namer = ToolNamer::default();
        assert_eq!(namer.options(), &NamingOptions::new());
        assert_eq!(
            names(
                &namer,
                &[
                    (&plain, "search"),
                    (&scoped, "search"),
                    (&plain, "Get File/v2")
                ]
            ),
            [
                "mcp__github__search",
                "mcp__github__eu_devbox__search",
                "mcp__github__Get_File_v2"
            ]
        );
    }

    #[test]
    fn prefix_off_and_exemptions() {
        let (a, b) = (key("a"), key("b"));
        let off = ToolNamer::new(NamingOptions::new().with_prefix(false));
        assert_eq!(names(&off, &[(&a, "t"), (&b, "t")]), ["a__t", "b__t"]);
        let exempt =
            ToolNamer::new(NamingOptions::new().with_prefix_exempt(ServerName::new("b").unwrap()));
        assert_eq!(
            names(&exempt, &[(&a, "t"), (&b, "t")]),
            ["mcp__a__t", "b__t"]
        );
    }

    #[test]
    fn collisions_get_identity_hashes() {
        let s = key("s");
        let namer = ToolNamer::default();
        assert_eq!(
            names(&namer, &[(&s, "a.b"), (&s, "a_b"), (&s, "c")]),
            [
                format!("mcp__s__a_b_{}", h("s\0a.b", 8)),
                format!("mcp__s__a_b_{}", h("s\0a_b", 8)),
                "mcp__s__c".to_owned(),
            ]
        );
    }

    #[test]
    fn environments_without_namespaces_collide_and_are_told_apart() {
        let (host, dev) = (key("s"), key("s@dev"));
        let namer = ToolNamer::new(NamingOptions::new().with_environment_namespaces(false));
        assert_eq!(
            names(&namer, &[(&host, "t"), (&dev, "t")]),
            [
                format!("mcp__s__t_{}", h("s\0t", 8)),
                format!("mcp__s__t_{}", h("s@dev\0t", 8)),
            ]
        );
        // Alone, a scoped server keeps the plain name.
        assert_eq!(names(&namer, &[(&dev, "t")]), ["mcp__s__t"]);
    }

    #[test]
    fn environments_that_sanitize_alike_collide() {
        let (dot, under) = (key("s@a.b"), key("s@a_b"));
        let got = names(&ToolNamer::default(), &[(&dot, "t"), (&under, "t")]);
        assert_eq!(
            got,
            [
                format!("mcp__s__a_b__t_{}", h("s@a.b\0t", 8)),
                format!("mcp__s__a_b__t_{}", h("s@a_b\0t", 8)),
            ]
        );
    }

    #[test]
    fn long_names_are_cut_to_exactly_max_len() {
        let s = key("s");
        let tool = "x".repeat(100);
        let [got] = names(&ToolNamer::default(), &[(&s, &tool)])
            .try_into()
            .unwrap();
        assert_eq!(got.len(), 64);
        assert_eq!(
            got,
            format!("mcp__s__{}_{}", "x".repeat(47), h(&format!("s\0{tool}"), 8))
        );
        // Exactly at the limit: untouched.
        let fits = "y".repeat(64 - "mcp__s__".len());
        assert_eq!(
            names(&ToolNamer::default(), &[(&s, &fits)]),
            [format!("mcp__s__{fits}")]
        );
    }

    #[test]
    fn max_len_is_raised_to_the_minimum() {
        let namer = ToolNamer::new(NamingOptions::new().with_max_len(3));
        assert_eq!(namer.options().max_len, MIN_MAX_TOOL_NAME_LEN);
        let s = key("server");
        let [got] = names(&namer, &[(&s, "tool")]).try_into().unwrap();
        assert_eq!(got, format!("mcp__se_{}", h("server\0tool", 8)));
    }

    #[test]
    fn hashed_name_equal_to_a_plain_name_escalates() {
        let s = key("s");
        let tricky = format!("a_b_{}", h("s\0a.b", 8));
        let got = names(
            &ToolNamer::default(),
            &[(&s, "a.b"), (&s, "a_b"), (&s, &tricky)],
        );
        assert_eq!(
            got,
            [
                format!("mcp__s__a_b_{}", h("s\0a.b", 12)),
                format!("mcp__s__a_b_{}", h("s\0a_b", 8)),
                format!("mcp__s__{tricky}_{}", h(&format!("s\0{tricky}"), 8)),
            ]
        );
    }

    #[test]
    fn exempt_and_prefixed_servers_can_collide() {
        let (mcp, x) = (key("mcp"), key("x"));
        let namer = ToolNamer::new(
            NamingOptions::new().with_prefix_exempt(ServerName::new("mcp").unwrap()),
        );
        assert_eq!(
            names(&namer, &[(&mcp, "x__y"), (&x, "y")]),
            [
                format!("mcp__x__y_{}", h("mcp\0x__y", 8)),
                format!("mcp__x__y_{}", h("x\0y", 8)),
            ]
        );
    }

    #[test]
    fn salted_levels_stay_valid_and_differ() {
        let s = key("s");
        let mut slot = Slot {
            key: &s,
            rank: 0,
            raw: "t",
            base: "mcp__s__t".to_owned(),
            level: SUFFIX_HEX.len() - 1,
            suffixed: None,
        };
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..4 {
            let name = suffixed(&slot, 16);
            assert_eq!(name.len(), 16, "{name}");
            assert!(name.starts_with("m_"), "{name}");
            assert!(seen.insert(name));
            slot.level += 1;
        }
    }

    #[test]
    fn sanitizing_is_per_byte() {
        let mut out = String::new();
        push_sanitized(&mut out, "a.bé/c\0-_Z");
        assert_eq!(out, "a_b___c_-_Z");
    }

    #[test]
    fn duplicates_and_empty_tools() {
        let s = key("s");
        let table = ToolNamer::default().qualify([(&s, ""), (&s, ""), (&s, "é")]);
        assert_eq!(table.len(), 2);
        assert_eq!(table.qualified_name(&s, ""), Some("mcp__s__"));
        assert_eq!(table.qualified_name(&s, "é"), Some("mcp__s____"));
        assert!(ToolNamer::default().qualify([]).is_empty());
    }

    #[test]
    fn every_unshortened_name_starts_with_its_namespace() {
        let (plain, scoped, exempt) = (key("github"), key("github@devbox"), key("builtin"));
        let namer = ToolNamer::new(
            NamingOptions::new().with_prefix_exempt(ServerName::new("builtin").unwrap()),
        );
        let table = namer.qualify([
            (&plain, "a.b"),
            (&plain, "a_b"),
            (&scoped, "x"),
            (&exempt, "y"),
        ]);
        for (k, t) in [
            (&plain, "a.b"),
            (&plain, "a_b"),
            (&scoped, "x"),
            (&exempt, "y"),
        ] {
            let name = table.qualified_name(k, t).unwrap();
            assert!(name.starts_with(&namer.namespace(k)), "{name}");
        }
        assert_eq!(namer.namespace(&plain), "mcp__github__");
        assert_eq!(namer.namespace(&exempt), "builtin__");
        let flat = ToolNamer::new(NamingOptions::new().with_environment_namespaces(false));
        assert_eq!(flat.namespace(&scoped), "mcp__github__");
    }
}
