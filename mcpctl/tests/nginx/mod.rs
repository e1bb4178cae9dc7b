//! Debian's nginx for the tests of several `mcpctl serve --http` instances: found (or the
//! test skipped, failed under `MCP_REQUIRE_NGINX=1`), started as the test's user on a
//! loopback port with the documented `deploy/nginx/mcpctl.conf` (addresses and `listen`
//! replaced) and a prefix in the test's directory, and stopped with no process left.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; each test file uses a part"
)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The header the test's nginx adds: which instance answered.
pub(crate) const UPSTREAM: &str = "x-mcpctl-upstream";

/// nginx, or `None` (said on stderr) when it is not installed, a failure under
/// `MCP_REQUIRE_NGINX=1`.
#[allow(clippy::print_stderr, reason = "the skip notice goes to stderr")]
pub(crate) fn nginx() -> Option<PathBuf> {
    let found = ["/usr/sbin/nginx", "/usr/local/sbin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("MCP_REQUIRE_NGINX").is_none(),
            "nginx is not installed: scripts/test.sh installs Debian's nginx package"
        );
        eprintln!("skipped: nginx is not installed (Debian's nginx package)");
    }
    found
}

/// A free loopback port (taken back before nginx binds it).
pub(crate) fn free_port() -> u16 {
    mcp_testkit::free_loopback_port().unwrap()
}

/// nginx running in the foreground with its prefix in `dir`; stopped (SIGQUIT, then
/// SIGKILL) on drop, its workers with it.
pub(crate) struct Nginx {
    child: Child,
    dir: PathBuf,
}

impl Nginx {
    /// Starts `binary` with the documented configuration for instances `one` and `two`
    /// (`host:port`), listening on `port`; returns once it accepts connections.
    pub(crate) fn start(binary: &Path, dir: PathBuf, one: &str, two: &str, port: u16) -> Self {
        let documented = include_str!("../../../deploy/nginx/mcpctl.conf");
        let site = documented
            .replace("127.0.0.1:8931", one)
            .replace("127.0.0.1:8932", two)
            .replace(
                "    listen 443 ssl;",
                &format!(
                    "    listen 127.0.0.1:{port};\n    add_header {UPSTREAM} $upstream_addr always;"
                ),
            );
        assert_ne!(
            site, documented,
            "the documented configuration changed shape"
        );
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(dir.join("mcpctl.conf"), site).unwrap();
        let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
        let d = dir.display();
        let main = format!(
            "{user}worker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log info;\nevents {{ worker_connections 128; }}\nhttp {{\n  access_log {d}/access.log;\n  client_body_temp_path {d}/tmp/body;\n  proxy_temp_path {d}/tmp/proxy;\n  fastcgi_temp_path {d}/tmp/fastcgi;\n  uwsgi_temp_path {d}/tmp/uwsgi;\n  scgi_temp_path {d}/tmp/scgi;\n  include {d}/mcpctl.conf;\n}}\n",
            user = if root { "user root;\n" } else { "" },
        );
        std::fs::write(dir.join("nginx.conf"), main).unwrap();
        let child = Command::new(binary)
            .arg("-p")
            .arg(&dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        let nginx = Self { child, dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nginx did not listen: {}",
                std::fs::read_to_string(nginx.dir.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        nginx
    }

    /// The processes whose parent is nginx's master (its workers).
    pub(crate) fn workers(&self) -> Vec<u32> {
        let master = self.child.id();
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                    // `pid (comm) state ppid ...`: the fields after the last `)`.
                    stat.rsplit_once(')')
                        .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                        == Some(master)
                })
            })
            .collect()
    }

    /// Stops nginx and checks that no process of it is left.
    pub(crate) fn stop(mut self) {
        let workers = self.workers();
        assert!(!workers.is_empty(), "nginx has no worker");
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-QUIT", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "nginx did not stop after SIGQUIT"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        for worker in workers {
            let gone = Instant::now() + Duration::from_secs(10);
            while Path::new(&format!("/proc/{worker}")).exists() {
                assert!(Instant::now() < gone, "nginx worker {worker} is left");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let pid = self.child.id().to_string();
            let _ = Command::new("kill").args(["-QUIT", &pid]).status();
            // A graceful stop, waited for (bounded), then a kill if it did not come.
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while self.child.try_wait().ok().flatten().is_none()
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
