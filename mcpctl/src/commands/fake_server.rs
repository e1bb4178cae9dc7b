//! The hidden `fake-server` command: serves an `mcp-testkit` scenario on stdio. The demo's
//! stdio servers run this binary with it, so the demo needs no other program.

use std::process::ExitCode;

use mcp_testkit::Scenario;

use crate::cli::FakeServerArgs;

/// Serves the scenario until stdin closes.
pub(crate) fn run(args: &FakeServerArgs) -> ExitCode {
    let scenario = match (&args.scenario, &args.scenario_json) {
        (Some(path), _) => Scenario::from_path(path),
        (None, Some(json)) => Scenario::from_json_str(json),
        (None, None) => Ok(Scenario::default()),
    };
    let scenario = match scenario {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(crate::error::EXIT_USAGE);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(crate::error::EXIT_FAILURE);
        }
    };
    match runtime.block_on(mcp_testkit::serve_stdio(scenario)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(crate::error::EXIT_FAILURE)
        }
    }
}
