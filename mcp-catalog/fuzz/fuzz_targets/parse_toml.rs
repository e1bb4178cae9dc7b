//! TOML configuration parsing never panics and every error is located inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match mcp_catalog::Config::from_toml_str(text, "fuzz.toml") {
        Ok(loaded) => {
            for warning in loaded.warnings() {
                let _ = warning.to_string();
            }
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
