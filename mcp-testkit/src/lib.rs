//! Fake MCP servers for tests: in process, as the `mcp-fake-server` stdio binary, and
//! over streamable HTTP, all driven by one serializable [`Scenario`].
//!
//! (Full documentation below is being written.)

mod behavior;
mod bin_path;
mod error;
mod http;
mod in_process;
mod killable;
mod paging;
mod process;
mod record;
mod scenario;
mod server;
mod stdio;
mod temp;
mod wire;

pub use bin_path::{
    FAKE_SERVER_BIN_ENV, FAKE_SERVER_BIN_NAME, fake_server_bin, try_fake_server_bin,
};
pub use error::Error;
pub use http::{
    DEFAULT_WWW_AUTHENTICATE, HttpCounters, HttpFakeServer, HttpOptions, InjectedFailure, MCP_PATH,
    SHUTDOWN_GRACE, serve_http_process,
};
pub use in_process::{DUPLEX_BUFFER, InProcessServer};
pub use paging::REPEATING_CURSOR;
pub use process::{
    POLL_INTERVAL, assert_no_process, assert_no_process_group, kill_process, kill_process_group,
    process_alive, process_group_members, read_pid_file, terminate_process, wait_gone,
    wait_group_gone,
};
pub use record::RecordedRequest;
pub use scenario::{
    Behavior, CapabilityFlags, DEFAULT_VERSION, Faults, PromptSpec, Recording, ResourceSpec,
    ResourceTemplateSpec, Scenario, ServerInfoSpec, ToolSpec,
};
pub use server::FakeServer;
pub use stdio::{GARBAGE_LINE, serve_stdio};
pub use temp::TestHome;
