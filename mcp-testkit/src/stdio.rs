//! The stdio runner used by the `mcp-fake-server` binary.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use rmcp::ServiceExt;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::server::FakeServer;
use crate::{Error, Faults, Scenario};

/// The garbage line written by [`Faults::garbage_stdout`].
pub const GARBAGE_LINE: &str = "this is not JSON-RPC {{{ garbage";

/// Serve `scenario` on this process's stdin/stdout until stdin closes, applying every
/// startup fault first. This is the whole `mcp-fake-server` program; it may call
/// `std::process::exit` ([`Faults::exit_at_startup`], [`crate::Behavior::Exit`]).
///
/// # Errors
/// Writing the pid file or grandchild pid file, spawning the grandchild, or the rmcp
/// service failing to start.
///
/// # Cancel safety
/// Meant to be the whole of a process's `main`; dropping it stops serving.
pub async fn serve_stdio(scenario: Scenario) -> Result<(), Error> {
    let faults = scenario.faults.clone();
    process_startup(&scenario)?;
    let mut stdout = tokio::io::stdout();
    write_preamble(&faults, &mut stdout)
        .await
        .map_err(|source| Error::Io {
            doing: "writing the stdout preamble",
            source,
        })?;

    let stop = CancellationToken::new();
    let server = FakeServer::for_stdio(scenario, stop.clone());
    let on_discover = if faults.close_on_discover {
        Some(OnDiscover::Exit)
    } else if faults.refuse_discover {
        Some(OnDiscover::Refuse)
    } else if faults.ignore_discover {
        Some(OnDiscover::Ignore)
    } else {
        None
    };
    let served = if let Some(on_discover) = on_discover {
        let stdin = without_discover(on_discover);
        server
            .serve_with_ct((stdin, tokio::io::stdout()), stop.clone())
            .await
    } else {
        server
            .serve_with_ct(rmcp::transport::stdio(), stop.clone())
            .await
    };
    let result = match served {
        Ok(running) => {
            let _ = running.waiting().await;
            Ok(())
        }
        Err(e) => Err(Error::Protocol {
            doing: "serving stdio",
            message: e.to_string(),
        }),
    };
    if faults.ignore_sigterm {
        // A stubborn server: only SIGKILL ends it.
        std::future::pending::<()>().await;
    }
    result
}

/// What the binary does with a `server/discover` request before rmcp sees it.
#[derive(Clone, Copy, PartialEq)]
enum OnDiscover {
    /// [`Faults::ignore_discover`]: drop it.
    Ignore,
    /// [`Faults::refuse_discover`]: answer "method not found".
    Refuse,
    /// [`Faults::close_on_discover`]: exit, as pre-2026 rmcp servers do.
    Exit,
}

/// stdin without its `server/discover` requests ([`Faults::ignore_discover`],
/// [`Faults::refuse_discover`], [`Faults::close_on_discover`]): lines are copied through a
/// pipe, and a request of that method is dropped, answered with "method not found", or
/// ends the process. The answer is written before any later line reaches rmcp, and rmcp
/// writes nothing before it has a request to answer, so the two writers of stdout never
/// interleave.
fn without_discover(on_discover: OnDiscover) -> tokio::io::DuplexStream {
    use tokio::io::AsyncBufReadExt;
    let (reader, mut writer) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        let mut stdout = tokio::io::stdout();
        while let Ok(Some(line)) = lines.next_line().await {
            let message = serde_json::from_str::<serde_json::Value>(&line).ok();
            if let Some(m) = message.filter(|m| m["method"] == "server/discover") {
                if on_discover == OnDiscover::Exit {
                    let mut stderr = std::io::stderr().lock();
                    let _ = writeln!(stderr, "mcp-fake-server: expected initialize request");
                    let _ = stderr.flush();
                    std::process::exit(1);
                }
                if on_discover == OnDiscover::Refuse {
                    let answer = serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": m["id"],
                        "error": {"code": -32601, "message": "Method not found"},
                    });
                    let mut answer = answer.to_string();
                    answer.push('\n');
                    if stdout.write_all(answer.as_bytes()).await.is_err()
                        || stdout.flush().await.is_err()
                    {
                        break;
                    }
                }
                continue;
            }
            if writer.write_all(line.as_bytes()).await.is_err()
                || writer.write_all(b"\n").await.is_err()
            {
                break;
            }
        }
    });
    reader
}

/// The process-level startup shared by the stdio and HTTP process modes: pid file,
/// SIGTERM handler, grandchild, stderr text and flood, exit at startup.
pub(crate) fn process_startup(scenario: &Scenario) -> Result<(), Error> {
    let faults = &scenario.faults;
    if let Some(path) = &scenario.record.pid_file {
        write_file(path, &format!("{}\n", std::process::id()))?;
    }
    if faults.ignore_sigterm {
        ignore_sigterm()?;
    }
    if let Some(path) = &faults.spawn_grandchild {
        spawn_grandchild(path)?;
    }
    let mut stderr = std::io::stderr().lock();
    if let Some(text) = &faults.stderr {
        let _ = writeln!(stderr, "{text}");
    }
    if let Some(code) = faults.exit_at_startup {
        let _ = stderr.flush();
        std::process::exit(code);
    }
    if let Some(lines) = faults.flood_stderr {
        for i in 0..lines {
            let _ = writeln!(stderr, "mcp-fake-server stderr flood line {i}");
        }
    }
    Ok(())
}

/// Write the stdout faults (garbage line, huge line) to `out`.
pub(crate) async fn write_preamble<W: AsyncWrite + Unpin>(
    faults: &Faults,
    out: &mut W,
) -> std::io::Result<()> {
    if faults.garbage_stdout {
        out.write_all(GARBAGE_LINE.as_bytes()).await?;
        out.write_all(b"\n").await?;
    }
    if let Some(bytes) = faults.huge_line {
        let chunk = vec![b'x'; 64 * 1024];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len());
            out.write_all(&chunk[..n]).await?;
            left -= n;
        }
        out.write_all(b"\n").await?;
    }
    out.flush().await
}

fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|source| Error::WriteFile {
        path: path.to_owned(),
        source,
    })
}

fn ignore_sigterm() -> Result<(), Error> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).map_err(|source| Error::Io {
        doing: "installing the SIGTERM handler",
        source,
    })?;
    tokio::spawn(async move { while term.recv().await.is_some() {} });
    Ok(())
}

fn spawn_grandchild(pid_file: &Path) -> Result<(), Error> {
    let child = std::process::Command::new("sleep")
        .arg("1000")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| Error::Io {
            doing: "spawning the grandchild `sleep 1000`",
            source,
        })?;
    write_file(pid_file, &format!("{}\n", child.id()))
    // The child handle is dropped without waiting: the grandchild outlives us unless
    // someone kills our process group.
}
