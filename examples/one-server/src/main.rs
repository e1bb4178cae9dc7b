//! `one-server COMMAND [ARGS...]`: lists the tools of one stdio MCP server.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let mut argv = std::env::args().skip(1);
    let Some(command) = argv.next() else {
        eprintln!("usage: one-server COMMAND [ARGS...]");
        return std::process::ExitCode::from(2);
    };
    let args: Vec<String> = argv.collect();
    match one_server::run(&command, &args, None).await {
        Ok(report) => {
            println!("era: {}", report.era);
            for tool in report.tools {
                println!("tool: {tool}");
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("one-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
