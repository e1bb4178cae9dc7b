//! Live startup progress: a spinner per server on a terminal, plain lines otherwise.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_connections::{ConnectionEvent, ConnectionSet, StartupSummary};
use mcp_key::McpServerKey;
use tokio::sync::mpsc;

use crate::term::screen;
use crate::term::style::Style;

/// How startup progress is shown (always on stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgressMode {
    /// One spinner per server, updated in place, cleared when startup completes.
    Spinners,
    /// One line per server as it settles, in the order they settle.
    Plain,
    /// Nothing.
    Quiet,
}

impl ProgressMode {
    /// Spinners when stderr is a terminal and the output is for people; otherwise plain
    /// lines when `plain` is asked for, else nothing.
    pub(crate) fn choose(json: bool, plain: bool) -> Self {
        if json {
            Self::Quiet
        } else if std::io::stderr().is_terminal() {
            Self::Spinners
        } else if plain {
            Self::Plain
        } else {
            Self::Quiet
        }
    }
}

/// Shows progress until every server settled; returns the settled states.
pub(crate) async fn show_startup(
    set: &ConnectionSet,
    rx: mpsc::UnboundedReceiver<ConnectionEvent>,
    mode: ProgressMode,
) -> StartupSummary {
    match show_startup_until(set, rx, mode, &|| false).await {
        Some(summary) => summary,
        None => set.wait_startup().await,
    }
}

/// Shows progress until every server settled (returns the settled states) or, checked
/// after each server settles, `enough()` is true (returns `None`).
pub(crate) async fn show_startup_until(
    set: &ConnectionSet,
    mut rx: mpsc::UnboundedReceiver<ConnectionEvent>,
    mode: ProgressMode,
    enough: &(dyn Fn() -> bool + Send + Sync),
) -> Option<StartupSummary> {
    if enough() {
        return None;
    }
    let mut display = Display::new(set, mode);
    let servers = set.servers().count();
    let mut settled_events = std::collections::BTreeSet::new();
    let settled = set.wait_startup();
    tokio::pin!(settled);
    let mut summary = None;
    // After every server settled, its last event may still be on its way (the state is
    // published a moment before the event): wait for it, briefly.
    let mut grace_until: Option<tokio::time::Instant> = None;
    loop {
        if summary.is_some() && settled_events.len() >= servers {
            break;
        }
        tokio::select! {
            s = &mut settled, if summary.is_none() => {
                summary = Some(s);
                grace_until = Some(tokio::time::Instant::now() + EVENT_GRACE);
            }
            event = rx.recv() => match event {
                Some(event) => {
                    display.on_event(&event);
                    if is_settling(&event)
                        && let Some(server) = event.server()
                    {
                        settled_events.insert(server.clone());
                        if enough() {
                            display.finish();
                            return None;
                        }
                    }
                }
                None => grace_until = Some(tokio::time::Instant::now()),
            },
            () = sleep_until_opt(grace_until) => break,
        }
    }
    display.finish();
    match summary {
        Some(summary) => Some(summary),
        None => Some(set.wait_startup().await),
    }
}

/// How long to wait for the last events after every server settled.
const EVENT_GRACE: Duration = Duration::from_secs(1);

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

fn is_settling(event: &ConnectionEvent) -> bool {
    matches!(
        event,
        ConnectionEvent::Ready { .. }
            | ConnectionEvent::Failed { .. }
            | ConnectionEvent::Cancelled { .. }
    )
}

struct Display {
    mode: ProgressMode,
    style: Style,
    width: usize,
    multi: Option<MultiProgress>,
    bars: BTreeMap<McpServerKey, ProgressBar>,
    /// On the screen's list while the spinners are live, so a question hides them.
    _on_screen: Option<screen::Registration>,
}

impl Display {
    fn new(set: &ConnectionSet, mode: ProgressMode) -> Self {
        let width = set
            .servers()
            .map(|k| k.to_string().len())
            .max()
            .unwrap_or(0);
        let mut display = Self {
            mode,
            style: Style::stderr(),
            width,
            multi: None,
            bars: BTreeMap::new(),
            _on_screen: None,
        };
        if mode == ProgressMode::Spinners {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let style =
                ProgressStyle::with_template("{spinner:.cyan} {prefix} {msg} {elapsed:.dim}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner());
            for key in set.servers() {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(style.clone());
                bar.set_prefix(format!("{:<width$}", key.to_string()));
                bar.set_message("waiting");
                bar.enable_steady_tick(Duration::from_millis(100));
                display.bars.insert(key.clone(), bar);
            }
            display._on_screen = Some(screen::register(screen::Live::Multi(multi.clone())));
            display.multi = Some(multi);
        }
        display
    }

    fn on_event(&mut self, event: &ConnectionEvent) {
        let Some(line) = describe(event) else {
            return;
        };
        let Some(server) = event.server() else {
            return;
        };
        match self.mode {
            ProgressMode::Spinners => {
                if let Some(bar) = self.bars.get(server) {
                    if matches!(event, ConnectionEvent::Starting { .. }) {
                        bar.set_message(line);
                    } else {
                        // Settled: stop the spinner, keep the line until startup completes.
                        bar.finish_with_message(line);
                    }
                }
            }
            ProgressMode::Plain => {
                if !matches!(event, ConnectionEvent::Starting { .. }) {
                    let key = format!("{:<width$}", server.to_string(), width = self.width);
                    eprintln!("{} {key} {line}", self.style.dim("mcpctl:"));
                }
            }
            ProgressMode::Quiet => {}
        }
    }

    fn finish(self) {
        // The tickers first (each joins its thread), so no tick draws a line again after
        // the clear below: that left a stale `waiting 0s` line when a call was quick.
        for bar in self.bars.values() {
            bar.disable_steady_tick();
        }
        for bar in self.bars.values() {
            bar.finish_and_clear();
        }
        if let Some(multi) = self.multi {
            let _ = multi.clear();
            multi.set_draw_target(ProgressDrawTarget::hidden());
        }
    }
}

/// The progress text of one event.
fn describe(event: &ConnectionEvent) -> Option<String> {
    Some(match event {
        ConnectionEvent::Starting { .. } => "starting".to_owned(),
        ConnectionEvent::Ready { tools, .. } => format!("ready ({})", plural(*tools, "tool")),
        ConnectionEvent::Failed { reason, .. } => format!("failed ({})", reason.label()),
        ConnectionEvent::Cancelled { .. } => "cancelled".to_owned(),
        _ => return None,
    })
}

/// `1 tool`, `3 tools`.
pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// A tool call's progress on stderr: a bar with the server's message, the total when it
/// is known (a spinner while it is not) and the elapsed time on a terminal; one plain line
/// per notification otherwise; nothing with `--json`, whose output is the result alone.
pub(crate) struct CallProgress {
    bar: Option<ProgressBar>,
    /// On the screen's list while the bar is live, so a question hides it.
    _on_screen: Option<screen::Registration>,
}

impl std::fmt::Debug for CallProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallProgress")
            .field("bar", &self.bar)
            .finish_non_exhaustive()
    }
}

/// A bar's template once the server gave a total.
const BAR_TEMPLATE: &str = "{spinner:.cyan} [{elapsed}] {wide_bar:.cyan/blue} {percent:>3}% {msg}";
/// A spinner's template while it has not.
const SPINNER_TEMPLATE: &str = "{spinner:.cyan} [{elapsed}] {msg}";
/// Bar positions per unit of progress: progress values are fractional (`0.5` of `1`).
const SCALE: f64 = 1000.0;

impl CallProgress {
    /// The display and the callback that feeds it (`None` with `--json`).
    pub(crate) fn start(json: bool) -> (Self, Option<mcp_connections::ProgressCallback>) {
        if json {
            return (
                Self {
                    bar: None,
                    _on_screen: None,
                },
                None,
            );
        }
        if !std::io::stderr().is_terminal() {
            let plain: mcp_connections::ProgressCallback =
                std::sync::Arc::new(|p: mcp_connections::Progress| {
                    eprintln!("progress: {}", progress_text(&p));
                });
            return (
                Self {
                    bar: None,
                    _on_screen: None,
                },
                Some(plain),
            );
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(style(SPINNER_TEMPLATE));
        bar.enable_steady_tick(Duration::from_millis(120));
        let fed = bar.clone();
        let callback: mcp_connections::ProgressCallback =
            std::sync::Arc::new(move |p: mcp_connections::Progress| {
                // While a question is open the bar is off the screen: this update is
                // dropped (the next one carries the position anyway), and the thread that
                // delivers it does not wait for the person's answer.
                if !screen::is_asking() {
                    feed(&fed, &p);
                }
            });
        let on_screen = screen::register(screen::Live::Bar(bar.clone()));
        (
            Self {
                bar: Some(bar),
                _on_screen: Some(on_screen),
            },
            Some(callback),
        )
    }

    /// Clears the bar (the result follows).
    pub(crate) fn finish(self) {
        if let Some(bar) = self.bar {
            bar.disable_steady_tick();
            bar.finish_and_clear();
        }
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .progress_chars("=> ")
}

/// Moves the bar to `p`: a bar once a total is known, its message the server's.
fn feed(bar: &ProgressBar, p: &mcp_connections::Progress) {
    match p.total.filter(|t| t.is_finite() && *t > 0.0) {
        Some(total) => {
            if bar.length().is_none() {
                bar.set_style(style(BAR_TEMPLATE));
            }
            bar.set_length(scaled(total));
            bar.set_position(scaled(p.progress.min(total)));
        }
        None => bar.set_position(scaled(p.progress)),
    }
    let message = match &p.message {
        Some(m) => crate::term::render::terminal_safe(m).into_owned(),
        None if p.total.is_none() => format!("{}", p.progress),
        None => String::new(),
    };
    bar.set_message(message);
}

fn scaled(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        (value * SCALE).round() as u64
    } else {
        0
    }
}

/// `3/6 message`, `3 message` without a total.
fn progress_text(p: &mcp_connections::Progress) -> String {
    let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
    let message = p
        .message
        .as_deref()
        .map(|m| format!(" {}", crate::term::render::terminal_safe(m)))
        .unwrap_or_default();
    format!("{}{total}{message}", p.progress)
}
