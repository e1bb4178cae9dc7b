//! `one-server COMMAND [ARGS...]`: lists the tools, resources and prompts of one stdio MCP
//! server, and reads its first resource and prompt.

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
            for resource in report.resources {
                println!("resource: {resource}");
            }
            if let Some(text) = report.read {
                println!("first resource: {text}");
            }
            for prompt in report.prompts {
                println!("prompt: {prompt}");
            }
            if let Some(text) = report.prompt {
                println!("first prompt: {text}");
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("one-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
