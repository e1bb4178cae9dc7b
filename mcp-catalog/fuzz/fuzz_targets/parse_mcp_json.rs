//! `.mcp.json` parsing (with variable expansion) never panics and every error is located
//! inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let env = |name: &str| (name.len() % 2 == 0).then(|| format!("v-{name}"));
    match mcp_catalog::Config::from_mcp_json_str(text, "fuzz.json", &env) {
        Ok(loaded) => {
            let _ = mcp_catalog::CatalogBuilder::new().with_user_config(loaded).build();
        }
        Err(errors) => {
            let lines = text.split('\n').count();
            for error in &errors {
                let line = error.location().line().unwrap_or(0);
                assert!((1..=lines).contains(&line), "{error}");
            }
        }
    }
});
