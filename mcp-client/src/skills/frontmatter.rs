//! A `SKILL.md`'s YAML frontmatter (between the first two `---` lines), read from its
//! bytes and compared field by field with the frontmatter of the skill's entry.

use rmcp::model::SkillFrontmatter;
use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// The frontmatter of `text` as JSON values.
///
/// # Errors
/// Why there is none: no `---` first line, no closing `---` line, YAML that does not
/// parse, is not a mapping, or holds values JSON cannot (non-string keys, aliases,
/// infinities).
pub(crate) fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let is_fence = |line: &str| line.trim_end_matches(['\n', '\r']).trim_end() == "---";
    if !lines.next().is_some_and(is_fence) {
        return Err("does not start with a `---` line".to_owned());
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines {
        if is_fence(line) {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err("has no closing `---` line".to_owned());
    }
    let docs = YamlLoader::load_from_str(&yaml).map_err(|e| format!("is not YAML ({e})"))?;
    match docs.into_iter().next() {
        None | Some(Yaml::Null) => Ok(Map::new()),
        Some(Yaml::Hash(hash)) => {
            let mut map = Map::new();
            for (key, value) in hash {
                let Yaml::String(key) = key else {
                    return Err(format!("has a key that is not a string ({key:?})"));
                };
                let value = to_json(value).map_err(|e| format!("field `{key}` {e}"))?;
                map.insert(key, value);
            }
            Ok(map)
        }
        Some(_) => Err("is not a YAML mapping".to_owned()),
    }
}

fn to_json(yaml: Yaml) -> Result<Value, String> {
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::Number(i.into()),
        Yaml::String(s) => Value::String(s),
        Yaml::Real(text) => {
            let number = Yaml::Real(text.clone())
                .as_f64()
                .and_then(Number::from_f64)
                .ok_or_else(|| format!("holds a number JSON cannot ({text})"))?;
            Value::Number(number)
        }
        Yaml::Array(items) => {
            Value::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?)
        }
        Yaml::Hash(hash) => {
            let mut map = Map::new();
            for (key, value) in hash {
                let Yaml::String(key) = key else {
                    return Err(format!("has a key that is not a string ({key:?})"));
                };
                map.insert(key, to_json(value)?);
            }
            Value::Object(map)
        }
        Yaml::Alias(_) | Yaml::BadValue => return Err("holds a YAML alias".to_owned()),
    })
}

/// The first field where the entry's frontmatter and the file's differ (`name`, then
/// `description`, then the others in name order), and how.
pub(crate) fn first_difference(
    entry: &SkillFrontmatter,
    file: &Map<String, Value>,
) -> Option<(String, String)> {
    let entry = match serde_json::to_value(entry) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let mut fields: Vec<&String> = entry.keys().chain(file.keys()).collect();
    fields.sort_by_key(|f| {
        (
            f.as_str() != "name",
            f.as_str() != "description",
            f.as_str(),
        )
    });
    fields.dedup();
    fields.into_iter().find_map(|field| {
        let detail = match (entry.get(field), file.get(field)) {
            (Some(a), Some(b)) if same(a, b) => return None,
            (Some(a), Some(b)) => format!("says `{field}: {b}`, the entry says `{a}`"),
            (Some(a), None) => format!("has no `{field}`, the entry says `{a}`"),
            (None, Some(b)) => format!("says `{field}: {b}`, which the entry does not have"),
            (None, None) => return None,
        };
        Some((field.clone(), detail))
    })
}

/// Equal JSON values, numbers compared by value (YAML's `1.0` and JSON's `1.0` or `1`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.is_f64() || y.is_f64()) && x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> SkillFrontmatter {
        SkillFrontmatter::new(
            "pdf-processing",
            "Extract, fill, and assemble PDF documents",
        )
        .with_field("license", "MIT")
        .with_field(
            "metadata",
            json!({"version": 1.5, "tags": ["pdf", "forms"]}),
        )
    }

    const SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: MIT\nmetadata:\n  version: 1.5\n  tags: [pdf, forms]\n---\n\nBody.\n";

    #[test]
    fn a_matching_frontmatter_has_no_difference() {
        let file = parse(SKILL_MD).unwrap();
        assert_eq!(first_difference(&entry(), &file), None);
    }

    #[test]
    fn each_kind_of_difference_is_named_by_its_field() {
        let changed = SKILL_MD.replace("Extract, fill", "Exfiltrate");
        let (field, detail) = first_difference(&entry(), &parse(&changed).unwrap()).unwrap();
        assert_eq!(field, "description");
        assert!(detail.contains("Exfiltrate"), "{detail}");

        let missing = SKILL_MD.replace("license: MIT\n", "");
        let (field, _) = first_difference(&entry(), &parse(&missing).unwrap()).unwrap();
        assert_eq!(field, "license");

        let extra = SKILL_MD.replace("license: MIT\n", "license: MIT\nallowed-tools: Bash\n");
        let (field, detail) = first_difference(&entry(), &parse(&extra).unwrap()).unwrap();
        assert_eq!(field, "allowed-tools");
        assert!(detail.contains("entry does not have"), "{detail}");

        let nested = SKILL_MD.replace("version: 1.5", "version: 2");
        let (field, _) = first_difference(&entry(), &parse(&nested).unwrap()).unwrap();
        assert_eq!(field, "metadata");
    }

    #[test]
    fn numbers_compare_by_value() {
        let entry = SkillFrontmatter::new("a", "b").with_field("v", 1.0);
        let file = parse("---\nname: a\ndescription: b\nv: 1.0\n---\n").unwrap();
        assert_eq!(first_difference(&entry, &file), None);
    }

    #[test]
    fn unreadable_frontmatter_says_why() {
        for (text, why) in [
            ("no fence\n", "does not start"),
            ("---\nname: a\n", "no closing"),
            ("---\n- a\n- b\n---\n", "not a YAML mapping"),
            ("---\nname: [unclosed\n---\n", "not YAML"),
            ("---\nname: a\nname: b\n---\n", "not YAML"),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(why), "{text:?}: {error}");
        }
        assert_eq!(parse("---\n---\nbody").unwrap(), Map::new());
        assert_eq!(
            parse("\u{feff}---\r\nname: a\r\n---\r\n").unwrap()["name"],
            json!("a")
        );
    }
}
