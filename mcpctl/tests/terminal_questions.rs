//! On a terminal, every question mcpctl asks stays on the screen while it waits for the
//! answer: the call's spinner is taken off the screen while a server's elicitation asks
//! (its redraw, a carriage return and a cleared line, used to wipe the question).
//! Checked on a real pseudo-terminal (util-linux `script`), its output fed to a terminal
//! emulator (`vt100`), so the test sees the screen a person sees.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::io::{Read, Write};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::Workdir;

/// The screen of a pseudo-terminal running mcpctl.
struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
}

impl Screen {
    fn contents(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Waits until the screen shows `text` (at most 60 s: the demo's servers start first).
    fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.contents().contains(text) {
            assert!(
                Instant::now() < deadline,
                "the screen never showed {text:?}:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The demo's `create_note` is asked about first (its approval mode asks), then asks a
/// form (an elicitation): the question, then each field.
/// Each stays on the screen while mcpctl waits for its answer, for longer than several
/// spinner ticks (120 ms each), and the call completes with the answers given.
#[test]
fn every_question_stays_on_the_screen_while_it_waits_for_its_answer() {
    let wd = Workdir::new();
    let mut child = wd
        .terminal_command(&["call", "mcp__notes__create_note"])
        .env("COLUMNS", "120")
        .env("LINES", "40")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn script (util-linux)");
    let mut keys = child.stdin.take().unwrap();
    let mut out = child.stdout.take().unwrap();
    let parser = Arc::new(Mutex::new(vt100::Parser::new(40, 120, 0)));
    let reader = {
        let parser = Arc::clone(&parser);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                parser.lock().unwrap().process(&buf[..n]);
            }
        })
    };
    let screen = Screen { parser };
    let questions = [
        // The approval question first: `create_note` has no read-only hint.
        ("run it? [y]es / [N]o:", "y"),
        ("answer? [Y]es / [n]o (decline) / [c]ancel:", "y"),
        ("pinned [boolean, default false]:", ""),
        (
            "priority [string, one of low/normal/high, default normal]:",
            "high",
        ),
        ("title (Title) [string, default Untitled]:", "A fine note"),
    ];
    for (question, answer) in questions {
        screen.wait_for(question);
        // Long enough for several redraws of a live spinner.
        std::thread::sleep(Duration::from_millis(600));
        let shown = screen.contents();
        assert!(
            shown.contains(question),
            "the question {question:?} left the screen while it waited:\n{shown}"
        );
        writeln!(keys, "{answer}").unwrap();
    }
    screen.wait_for("A fine note");
    drop(keys);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let shown = screen.contents();
    assert!(status.success(), "{shown}");
    assert!(shown.contains("\"priority\": \"high\""), "{shown}");
    // Nothing of the startup spinners is left behind once the result is printed.
    assert!(!shown.contains("waiting"), "{shown}");
    wd.assert_no_server_left();
}
