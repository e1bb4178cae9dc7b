//! The status page of `mcpctl serve --http` in a real browser: headless Chromium (Debian's
//! `chromium`, installed by `scripts/test.sh`) renders `/status`; its screenshot is kept
//! under `target/status-page/` (the path is printed) and the DOM it built is checked:
//! servers, states, counts, and a hostile server's name and stderr as text, no element of
//! theirs. Chromium cannot add an `Authorization` header to what it loads, so it loads the
//! page through a loopback proxy of this test that adds the token: the gateway accepts no
//! token any other way.
//!
//! Without Chromium the test says it was skipped; under `MCP_REQUIRE_CHROMIUM=1` (set by
//! `scripts/test.sh` once it is installed) it fails instead.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway and the browser"
)]

mod status_page;
mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use status_page::{HOSTILE, HOSTILE_STDERR, base, call, settled};
use support::{Served, Workdir};

const TOKEN: &str = "browser-test-token-0123456789abcdef";

/// How long one Chromium run may take.
const BROWSER_BOUND: Duration = Duration::from_secs(120);

/// The browser, or `None` (said on stderr) when it is not installed, a failure under
/// `MCP_REQUIRE_CHROMIUM=1`.
#[allow(clippy::print_stderr, reason = "the skip notice goes to stderr")]
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|path| path.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("MCP_REQUIRE_CHROMIUM").is_none(),
            "chromium is not installed: scripts/test.sh installs Debian's chromium package"
        );
        eprintln!("SKIPPED: chromium is not installed; scripts/test.sh installs it");
    }
    found
}

/// A loopback HTTP proxy for one upstream: each connection's request gets
/// `Authorization: Bearer <token>` and `Connection: close`; the response goes back as it
/// came. Stopped (and its thread joined) on drop.
struct TokenProxy {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl TokenProxy {
    fn start(upstream: &str, token: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (upstream, token, stopped) = (upstream.to_owned(), token.to_owned(), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut served = Vec::new();
            for conn in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (upstream, token) = (upstream.clone(), token.clone());
                served.push(std::thread::spawn(move || {
                    let _ = forward(conn, &upstream, &token);
                }));
            }
            for thread in served {
                let _ = thread.join();
            }
        });
        Self {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for TokenProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One request from `client` to `upstream` (`host:port`) with the token, its response back.
fn forward(mut client: TcpStream, upstream: &str, token: &str) -> std::io::Result<()> {
    client.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if client.read(&mut byte)? == 0 || head.len() > 64 * 1024 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines = head.split("\r\n").filter(|l| !l.is_empty());
    let request_line = lines.next().unwrap_or_default();
    let mut request = format!("{request_line}\r\nHost: {upstream}\r\n");
    for line in lines {
        let name = line
            .split(':')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !matches!(name.as_str(), "host" | "authorization" | "connection") {
            request.push_str(line);
            request.push_str("\r\n");
        }
    }
    request.push_str(&format!(
        "Authorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    ));
    let mut server = TcpStream::connect(upstream)?;
    server.set_read_timeout(Some(Duration::from_secs(30)))?;
    server.write_all(request.as_bytes())?;
    std::io::copy(&mut server, &mut client)?;
    Ok(())
}

/// Runs Chromium headless on `url` with `args` (its profile in `profile`); its stdout.
fn run_chromium(browser: &Path, profile: &Path, args: &[String], url: &str) -> String {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-breakpad",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .env("HOME", profile)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + BROWSER_BOUND;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {BROWSER_BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "chromium failed ({status}):\n{err}");
    out
}

/// Chromium processes still running with `profile` on their command line.
fn browsers_left(profile: &Path) -> Vec<String> {
    let needle = profile.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|cmd| String::from_utf8_lossy(&cmd).replace('\0', " "))
        .filter(|cmd| cmd.contains(&needle))
        .collect()
}

/// The text of `html` (tags dropped, the five entities decoded).
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The text of each cell of the row `id` of the DOM `dom`.
fn row_cells(dom: &str, id: &str) -> Vec<String> {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no row {id} in\n{dom}"));
    let row = &dom[start..];
    let row = &row[..row.find("</tr>").unwrap()];
    row.split("<td")
        .skip(1)
        .map(|cell| text_of(&format!("<td{cell}")).trim().to_owned())
        .collect()
}

#[test]
#[allow(clippy::print_stderr, reason = "the screenshot's path is printed")]
fn the_status_page_renders_in_chromium() {
    let Some(browser) = chromium() else {
        return;
    };
    let wd = Workdir::new();
    let profile = wd.path().join("chromium");
    std::fs::create_dir_all(&profile).unwrap();
    let mut served = Served::start(&wd, &status_page::config(&wd), TOKEN, &[]);
    let base = base(&served.url);
    let runtime = support::runtime();
    let client = runtime.block_on(async {
        let client = status_page::connect(&served.url, TOKEN).await;
        status_page::wait_for(&base, TOKEN, settled).await;
        for _ in 0..3 {
            assert!(!call(&client, "mcp__echo__echo").await);
        }
        assert!(call(&client, "mcp__echo__fail").await);
        client
    });
    let proxy = TokenProxy::start(base.strip_prefix("http://").unwrap(), TOKEN);
    let url = format!("http://{}/status", proxy.addr);

    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/status-page");
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join("status.png");
    let _ = std::fs::remove_file(&shot);
    run_chromium(
        &browser,
        &profile,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1400,900".to_owned(),
        ],
        &url,
    );
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    assert_eq!(width, 1400, "the window's width");
    eprintln!(
        "status page screenshot: {}",
        shot.canonicalize().unwrap().display()
    );

    let dom = run_chromium(&browser, &profile, &["--dump-dom".to_owned()], &url);
    drop(proxy);
    let text = text_of(&dom);
    assert!(text.contains("mcpctl serve"), "{dom}");
    assert!(text.contains("Servers (4)"), "{dom}");
    assert!(text.contains("1 client "), "{dom}");

    let echo = row_cells(&dom, "server-echo");
    // The first cell: the name, then what the server reports itself as.
    assert!(echo[0].starts_with("echo"), "{echo:?}");
    assert_eq!(
        echo[1..11],
        [
            "stdio",
            "ready",
            "2025-11-25",
            &echo[4],
            "0",
            "3",
            "4",
            "1",
            "4",
            "1"
        ],
        "{dom}"
    );
    assert!(echo[4].parse::<u32>().is_ok(), "a process id: {echo:?}");
    assert!(
        echo[11].ends_with(" ms") && echo[12].ends_with(" ms"),
        "{echo:?}"
    );

    let broken = row_cells(&dom, "server-broken");
    assert_eq!(broken[..2], ["broken", "stdio"], "{dom}");
    // The state, then the reason.
    assert_eq!(broken[2], "failedexited with status 3", "{broken:?}");
    assert_eq!(broken[4], "–", "no process: {broken:?}");
    // The failure's detail row: the stderr as text.
    assert!(
        text.contains(&format!(
            "stderr: {}",
            HOSTILE_STDERR.replace('\u{1b}', "\\e")
        )),
        "{dom}"
    );

    // The hostile name, title and tool name are text the browser shows, not markup it ran:
    // no element of theirs is in the DOM, and their escapes are visible.
    let shown = HOSTILE.replace('\u{1b}', "\\e").replace('\u{7}', "\\x07");
    assert!(text.matches(&shown).count() >= 3, "{dom}");
    for element in ["<script", "<img", "<b>"] {
        assert!(!dom.contains(element), "{element} in the DOM:\n{dom}");
    }
    let modern = row_cells(&dom, "server-modern");
    assert_eq!(modern[1..4], ["stdio", "ready", "2026-07-28"], "{modern:?}");
    let hostile = row_cells(&dom, "server-hostile");
    assert!(hostile[0].starts_with("hostile"), "{hostile:?}");
    assert_eq!(hostile[2], "ready", "{hostile:?}");

    runtime.block_on(async { client.cancel().await.unwrap() });
    served.stop();
    wd.assert_no_server_left();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !browsers_left(&profile).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        browsers_left(&profile),
        Vec::<String>::new(),
        "no browser process left"
    );
}
