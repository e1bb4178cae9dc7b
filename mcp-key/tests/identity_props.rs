//! Property tests for the validated identities: acceptance matches the documented grammar,
//! and text forms round-trip.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers fail loudly on bad fixtures"
)]

use mcp_key::{EnvironmentId, McpServerKey, NameProblem, ServerName};
use proptest::prelude::*;

fn server_grammar(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn environment_grammar(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// Mostly-valid text with a chance of bad characters, so both branches are exercised.
fn candidate() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9_.-]{0,70}",
        "[a-z@ /é\0.-]{0,8}",
        prop::collection::vec(any::<char>(), 0..80).prop_map(|c| c.into_iter().collect()),
    ]
}

proptest! {
    #[test]
    fn server_names_accept_exactly_the_grammar(s in candidate()) {
        match ServerName::new(s.clone()) {
            Ok(name) => {
                prop_assert!(server_grammar(&s));
                prop_assert_eq!(name.as_str(), s.as_str());
                prop_assert_eq!(name.to_string().parse::<ServerName>().unwrap(), name);
            }
            Err(err) => {
                prop_assert!(!server_grammar(&s));
                prop_assert!(err.is_invalid_server_name());
                if let NameProblem::BadChar { ch, position } = *err.problem() {
                    prop_assert_eq!(s[position..].chars().next(), Some(ch));
                }
            }
        }
    }

    #[test]
    fn environment_ids_accept_exactly_the_grammar(s in candidate()) {
        match EnvironmentId::new(s.clone()) {
            Ok(env) => {
                prop_assert!(environment_grammar(&s));
                prop_assert_eq!(env.as_str(), s.as_str());
                prop_assert_eq!(env.is_local(), s == "local");
            }
            Err(err) => {
                prop_assert!(!environment_grammar(&s));
                prop_assert!(err.is_invalid_environment_id());
            }
        }
    }

    #[test]
    fn keys_parse_iff_both_halves_are_valid(s in "[a-z@.]{0,6}|[A-Za-z0-9_-]{1,64}(@[A-Za-z0-9._-]{1,64})?") {
        let expected = match s.split_once('@') {
            None => server_grammar(&s),
            Some((name, env)) => server_grammar(name) && environment_grammar(env),
        };
        match s.parse::<McpServerKey>() {
            Ok(key) => {
                prop_assert!(expected);
                prop_assert_eq!(key.to_string(), s);
            }
            Err(err) => {
                prop_assert!(!expected);
                prop_assert!(err.is_invalid_key());
                if let NameProblem::BadChar { ch, position } = *err.problem() {
                    prop_assert_eq!(s[position..].chars().next(), Some(ch));
                }
            }
        }
    }
}
