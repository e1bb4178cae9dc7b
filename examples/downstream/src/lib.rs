//! A host that uses `mcp-pool` alone: no rmcp, no connection set.
//!
//! [`LineServer`] is a stdio server started by [`mcp_pool::launch`] and spoken to one
//! JSON-RPC line at a time; [`shared_pool`] is a [`Pool`] of them, so every user of a key
//! gets the same process.

use std::error::Error;
use std::time::Duration;

use mcp_pool::{LaunchSpec, Pool, PoolConfig, PooledConnection, StdioProcess, launch};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// A boxed error, what this example's functions return.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// A launched stdio server and its pipes. Requests are serialized: one request line is
/// written and lines are read until the reply with its id arrives.
#[derive(Debug)]
pub struct LineServer {
    process: StdioProcess,
    io: Mutex<Io>,
}

#[derive(Debug)]
struct Io {
    reader: BufReader<mcp_pool::StdoutReader>,
    writer: mcp_pool::StdinWriter,
    next_id: u64,
}

impl LineServer {
    /// Launches `program` with `args` through `mcp-pool`'s launcher.
    pub async fn launch(program: &str, args: &[String]) -> Result<Self, BoxError> {
        let spec = LaunchSpec::new(program)
            .with_args(args.iter().cloned())
            .with_stdin_grace(Duration::from_secs(1))
            .with_term_grace(Duration::from_secs(1));
        let mut process = launch(spec).await?;
        let (reader, writer) = process.take_transport().ok_or("transport already taken")?;
        let io = Io {
            reader: BufReader::new(reader),
            writer,
            next_id: 1,
        };
        Ok(Self {
            process,
            io: Mutex::new(io),
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Sends a JSON-RPC request and returns its `result` (or the `error` as an error).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, BoxError> {
        let mut io = self.io.lock().await;
        let id = io.next_id;
        io.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        io.send(&line).await?;
        loop {
            let mut text = String::new();
            if io.reader.read_line(&mut text).await? == 0 {
                return Err(format!("the server closed stdout before answering {method}").into());
            }
            let reply: Value = serde_json::from_str(&text)?;
            if reply.get("id") != Some(&json!(id)) {
                continue; // a notification or a server request: not ours
            }
            return match reply.get("error") {
                Some(error) => Err(format!("{method} failed: {error}").into()),
                None => Ok(reply.get("result").cloned().unwrap_or(Value::Null)),
            };
        }
    }

    /// Sends a JSON-RPC notification (no reply).
    pub async fn notify(&self, method: &str) -> Result<(), BoxError> {
        let line = json!({"jsonrpc": "2.0", "method": method});
        self.io.lock().await.send(&line).await
    }

    /// The MCP handshake: `initialize`, then `notifications/initialized`. Returns the
    /// server's `serverInfo.name`.
    pub async fn initialize(&self) -> Result<String, BoxError> {
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "downstream", "version": "0.1.0"},
        });
        let result = self.request("initialize", params).await?;
        self.notify("notifications/initialized").await?;
        let name = result["serverInfo"]["name"].as_str().unwrap_or_default();
        Ok(name.to_owned())
    }

    /// The names of the server's tools (`tools/list`, first page).
    pub async fn tool_names(&self) -> Result<Vec<String>, BoxError> {
        let result = self.request("tools/list", json!({})).await?;
        let tools = result["tools"].as_array().cloned().unwrap_or_default();
        Ok(tools
            .iter()
            .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
            .collect())
    }
}

impl Io {
    async fn send(&mut self, line: &Value) -> Result<(), BoxError> {
        let mut bytes = serde_json::to_vec(line)?;
        bytes.push(b'\n');
        self.writer.write_all(&bytes).await?;
        self.writer.flush().await?;
        Ok(())
    }
}

impl PooledConnection for LineServer {
    fn is_alive(&self) -> bool {
        !self.process.has_exited()
    }

    async fn shutdown(&self) {
        self.process.shutdown().await;
    }
}

/// A pool of [`LineServer`]s keyed by a name, with no idle keep-alive: the process stops
/// when its last user lets go.
pub fn shared_pool() -> Pool<String, LineServer> {
    Pool::new(PoolConfig::new().with_idle_keep_alive(Duration::ZERO))
}

/// Starts (once) and initializes the server a pool key stands for.
pub async fn start(program: String, args: Vec<String>) -> Result<LineServer, BoxError> {
    let server = LineServer::launch(&program, &args).await?;
    server.initialize().await?;
    Ok(server)
}
