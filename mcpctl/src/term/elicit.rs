//! Elicitation on the terminal: form fields asked one by one with their defaults, URL
//! requests shown; declined when stdin is not a terminal.

use std::io::{BufRead, IsTerminal, Write};

use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{BoxFuture, ElicitationHandler, ElicitationRequest};
use serde_json::{Map, Value};

use crate::term::style::Style;

/// Asks the person at the terminal; declines when stdin is not a terminal.
#[derive(Debug)]
pub(crate) struct TerminalElicitation {
    interactive: bool,
    /// One prompt at a time.
    lock: tokio::sync::Mutex<()>,
}

impl TerminalElicitation {
    pub(crate) fn new() -> Self {
        Self {
            interactive: std::io::stdin().is_terminal(),
            lock: tokio::sync::Mutex::new(()),
        }
    }
}

impl ElicitationHandler for TerminalElicitation {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult> {
        Box::pin(async move {
            if !self.interactive {
                eprintln!(
                    "mcpctl: declined a request for input from server `{}` (stdin is not a terminal): {}",
                    request.server,
                    crate::term::render::terminal_safe(request.message())
                );
                return ElicitResult::new(ElicitationAction::Decline);
            }
            let _turn = self.lock.lock().await;
            tokio::task::spawn_blocking(move || crate::term::screen::asking(|| ask(&request)))
                .await
                .unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Cancel))
        })
    }
}

/// Reads one line from stdin; `None` at end of input.
pub(crate) fn read_line(prompt: &str) -> Option<String> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

fn ask(request: &ElicitationRequest) -> ElicitResult {
    let s = Style::stderr();
    eprintln!();
    eprintln!(
        "{} server `{}` asks: {}",
        s.cyan_bold("?"),
        request.server,
        crate::term::render::terminal_safe(request.message())
    );
    let params = serde_json::to_value(&request.params).unwrap_or(Value::Null);
    if let Some(url) = params.get("url").and_then(Value::as_str) {
        eprintln!(
            "  open this URL to continue: {}",
            crate::term::render::terminal_safe(url)
        );
        return match read_line("  press Enter when done, or type n to decline: ") {
            None => ElicitResult::new(ElicitationAction::Cancel),
            Some(a) if a.eq_ignore_ascii_case("n") => ElicitResult::new(ElicitationAction::Decline),
            Some(_) => ElicitResult::new(ElicitationAction::Accept),
        };
    }
    match read_line("  answer? [Y]es / [n]o (decline) / [c]ancel: ").as_deref() {
        None => return ElicitResult::new(ElicitationAction::Cancel),
        Some(a) if a.eq_ignore_ascii_case("n") || a.eq_ignore_ascii_case("no") => {
            return ElicitResult::new(ElicitationAction::Decline);
        }
        Some(a) if a.eq_ignore_ascii_case("c") || a.eq_ignore_ascii_case("cancel") => {
            return ElicitResult::new(ElicitationAction::Cancel);
        }
        Some(_) => {}
    }
    let schema = request.requested_schema().unwrap_or(Value::Null);
    match ask_form(&schema, &request.field_order()) {
        Some(content) => {
            ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
        }
        None => ElicitResult::new(ElicitationAction::Cancel),
    }
}

/// Asks every property of the form, in `order` (the server's; any property it leaves out
/// after it); `None` when input ended.
fn ask_form(schema: &Value, order: &[String]) -> Option<Map<String, Value>> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Some(out);
    };
    for name in in_order(props, order) {
        let Some(prop) = props.get(name) else {
            continue;
        };
        let is_required = required.contains(&name.as_str());
        let prompt = field_prompt(name, prop, is_required);
        loop {
            let line = read_line(&prompt)?;
            if line.is_empty() {
                if let Some(default) = prop.get("default") {
                    out.insert(name.clone(), default.clone());
                    break;
                }
                if !is_required {
                    break;
                }
                eprintln!("  `{name}` is required");
                continue;
            }
            match parse_field(prop, &line) {
                Ok(value) => {
                    out.insert(name.clone(), value);
                    break;
                }
                Err(problem) => eprintln!("  {problem}"),
            }
        }
    }
    Some(out)
}

/// The names of `props` in `order`, then those `order` leaves out (sorted).
fn in_order<'a>(props: &'a Map<String, Value>, order: &'a [String]) -> Vec<&'a String> {
    let listed = order
        .iter()
        .filter(|name| props.contains_key(name.as_str()));
    let rest = props.keys().filter(|name| !order.contains(name));
    listed.chain(rest).collect()
}

fn field_prompt(name: &str, prop: &Value, required: bool) -> String {
    let kind = prop.get("type").and_then(Value::as_str).unwrap_or("string");
    let mut prompt = format!("  {name}");
    if let Some(title) = prop.get("title").and_then(Value::as_str)
        && title != name
    {
        prompt.push_str(&format!(" ({title})"));
    }
    let mut notes = vec![kind.to_owned()];
    if let Some(options) = prop.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = options.iter().map(plain).collect();
        notes.push(format!("one of {}", names.join("/")));
    }
    if let Some(default) = prop.get("default") {
        notes.push(format!("default {}", plain(default)));
    } else if required {
        notes.push("required".to_owned());
    }
    prompt.push_str(&format!(" [{}]", notes.join(", ")));
    if let Some(description) = prop.get("description").and_then(Value::as_str) {
        prompt.push_str(&format!(" {description}"));
    }
    prompt.push_str(": ");
    // Titles and descriptions come from the server.
    crate::term::render::terminal_safe(&prompt).into_owned()
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Parses one answer by the property's type.
fn parse_field(prop: &Value, input: &str) -> Result<Value, String> {
    if let Some(options) = prop.get("enum").and_then(Value::as_array) {
        return options
            .iter()
            .find(|o| plain(o) == input)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "choose one of {}",
                    options.iter().map(plain).collect::<Vec<_>>().join(", ")
                )
            });
    }
    match prop.get("type").and_then(Value::as_str).unwrap_or("string") {
        "boolean" => match input.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer yes or no".to_owned()),
        },
        "integer" => input
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "enter a whole number".to_owned()),
        "number" => input
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "enter a number".to_owned()),
        _ => Ok(Value::String(input.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_are_asked_in_the_servers_order_then_the_rest() {
        let props = json!({"pinned": {}, "priority": {}, "title": {}, "extra": {}});
        let props = props.as_object().unwrap();
        let order = [
            "title".to_owned(),
            "priority".to_owned(),
            "pinned".to_owned(),
            "gone".to_owned(),
        ];
        assert_eq!(
            in_order(props, &order),
            ["title", "priority", "pinned", "extra"]
        );
    }

    #[test]
    fn answers_are_parsed_by_type() {
        assert_eq!(
            parse_field(&json!({"type": "boolean"}), "Yes"),
            Ok(json!(true))
        );
        assert_eq!(
            parse_field(&json!({"type": "integer"}), "42"),
            Ok(json!(42))
        );
        assert!(parse_field(&json!({"type": "integer"}), "4.2").is_err());
        assert_eq!(
            parse_field(&json!({"type": "number"}), "4.5"),
            Ok(json!(4.5))
        );
        assert_eq!(
            parse_field(&json!({"type": "string", "enum": ["low", "high"]}), "high"),
            Ok(json!("high"))
        );
        assert!(parse_field(&json!({"type": "string", "enum": ["low", "high"]}), "mid").is_err());
        assert_eq!(
            parse_field(&json!({"type": "string"}), "x y"),
            Ok(json!("x y"))
        );
    }

    #[test]
    fn prompts_show_type_choices_and_default() {
        assert_eq!(
            field_prompt(
                "priority",
                &json!({"type": "string", "enum": ["low", "high"], "default": "low"}),
                false
            ),
            "  priority [string, one of low/high, default low]: "
        );
        assert_eq!(
            field_prompt("title", &json!({"type": "string", "title": "Title"}), true),
            "  title (Title) [string, required]: "
        );
    }
}
