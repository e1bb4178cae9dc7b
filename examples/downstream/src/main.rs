//! Launches one MCP server through `mcp-pool` and shares it between two users.
//!
//! ```sh
//! cargo run --manifest-path examples/downstream/Cargo.toml -- npx -y @modelcontextprotocol/server-everything
//! ```

use std::process::ExitCode;

use downstream::{BoxError, shared_pool, start};

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: downstream PROGRAM [ARGS...]   (a stdio MCP server)");
        return ExitCode::from(2);
    };
    match run(program, args.collect()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run(program: String, args: Vec<String>) -> Result<(), BoxError> {
    let pool = shared_pool();
    // Two users of the same key, at the same time: one start, one process.
    let user = |name: &'static str| {
        let (pool, program, args) = (pool.clone(), program.clone(), args.clone());
        async move {
            let lease = pool
                .acquire("server".to_owned(), || start(program, args))
                .await?;
            let tools = lease.tool_names().await?;
            println!("{name}: pid {}, tools: {}", lease.pid(), tools.join(", "));
            Ok::<_, BoxError>(lease.pid())
        }
    };
    let (a, b) = tokio::try_join!(user("user 1"), user("user 2"))?;
    println!("shared: {}", a == b);
    println!("starts: {}", pool.stats().starts);
    pool.shutdown().await;
    Ok(())
}
