//! Serde: identities serialize as their text form and validate when deserialized.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers fail loudly on bad fixtures"
)]

use std::collections::BTreeMap;

use mcp_key::{EnvironmentId, McpServerKey, Secret, ServerName};
use pretty_assertions::assert_eq;
use serde::de::DeserializeOwned;

fn round_trip<T>(value: &T, json: &str)
where
    T: serde::Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    assert_eq!(serde_json::to_string(value).unwrap(), json);
    assert_eq!(&serde_json::from_str::<T>(json).unwrap(), value);
}

#[test]
fn identities_are_strings_on_the_wire() {
    round_trip(&ServerName::new("github").unwrap(), r#""github""#);
    round_trip(&EnvironmentId::new("eu.devbox").unwrap(), r#""eu.devbox""#);
    round_trip(&EnvironmentId::LOCAL, r#""local""#);
    round_trip(&"srv".parse::<McpServerKey>().unwrap(), r#""srv""#);
    round_trip(
        &"srv@local".parse::<McpServerKey>().unwrap(),
        r#""srv@local""#,
    );
    round_trip(&Secret::new("tok\"en"), r#""tok\"en""#);
}

#[test]
fn keys_work_as_map_keys() {
    let mut map = BTreeMap::new();
    map.insert("b@x".parse::<McpServerKey>().unwrap(), 2);
    map.insert("a".parse::<McpServerKey>().unwrap(), 1);
    round_trip(&map, r#"{"a":1,"b@x":2}"#);
}

#[test]
fn invalid_text_is_rejected_with_the_reason() {
    let err = serde_json::from_str::<ServerName>(r#""my srv""#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid server name `my srv`: character ' ' at position 2 is not allowed \
         (use A-Z a-z 0-9 _ -)"
    );
    assert!(serde_json::from_str::<EnvironmentId>(r#""""#).is_err());
    assert!(serde_json::from_str::<McpServerKey>(r#""a@""#).is_err());
    assert!(serde_json::from_str::<McpServerKey>("7").is_err());
}
