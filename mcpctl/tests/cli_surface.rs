//! The command line as a person meets it: a tool call's progress, tables that fit the
//! terminal, shell completions and the manual page. On the embedded demo.

#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

mod support;

use support::Workdir;

#[test]
fn progress_is_one_line_per_notification_off_a_terminal_and_nothing_with_json() {
    let wd = Workdir::new();
    let run = wd.run(&["call", "--yes", "mcp__weather__refresh_stations"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    // rmcp hands each notification to a task of its own: under load one can be overtaken
    // (then skipped: progress only goes up) or still in flight when the result arrives.
    // Unloaded, all three are printed.
    assert!(!lines.is_empty(), "{}", run.stderr);
    let steps: Vec<u32> = lines
        .iter()
        .map(|l| {
            let step = l
                .strip_prefix("progress: ")
                .unwrap()
                .strip_suffix("/3")
                .unwrap();
            step.parse().unwrap()
        })
        .collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{lines:?}");
    assert!(steps.iter().all(|s| (1..=3).contains(s)), "{lines:?}");
    let run = wd.run(&["--json", "call", "--yes", "mcp__weather__refresh_stations"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("progress"), "{}", run.stderr);
    run.json();
}

#[test]
fn tables_are_cut_to_the_terminal_and_whole_with_wide_or_in_a_pipe() {
    let mut wd = Workdir::new();
    wd.set_env("COLUMNS", Some("60"));
    let run = wd.run_on_terminal(&["tools"], "");
    assert_eq!(run.code, 0, "{}", run.stdout);
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| l.starts_with("mcp__"))
        .collect();
    assert!(!rows.is_empty(), "{}", run.stdout);
    for row in &rows {
        assert!(
            row.chars().count() <= 60,
            "{row:?} is wider than the terminal"
        );
    }
    assert!(rows.iter().any(|r| r.ends_with('…')), "{rows:#?}");
    let wide = wd.run_on_terminal(&["--wide", "tools"], "");
    assert!(!wide.stdout.contains('…'), "{}", wide.stdout);
    // A pipe gets whole cells, whatever $COLUMNS says.
    let piped = wd.run(&["tools"]);
    assert!(!piped.stdout.contains('…'), "{}", piped.stdout);
    assert!(
        piped.stdout.lines().any(|l| l.chars().count() > 60),
        "{}",
        piped.stdout
    );
}

#[test]
fn completions_and_the_man_page_come_from_the_command_line_definition() {
    let wd = Workdir::new();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let run = wd.run(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        for word in ["mcpctl", "serve", "auth-status", "wide"] {
            assert!(run.stdout.contains(word), "{shell} completions lack {word}");
        }
    }
    let bad = wd.run(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    let man = wd.run(&["man"]);
    assert_eq!(man.code, 0, "{}", man.stderr);
    assert!(man.stdout.contains(".TH mcpctl"), "{}", man.stdout);
    assert!(man.stdout.contains("completions"), "{}", man.stdout);
}
