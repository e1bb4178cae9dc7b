//! ANSI colour, only when the stream is a terminal (and `NO_COLOR` is not set).

use std::io::IsTerminal;

/// Whether to colour one output stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    on: bool,
}

impl Style {
    /// Colour for stdout.
    pub(crate) fn stdout() -> Self {
        Self::new(std::io::stdout().is_terminal())
    }

    /// Colour for stderr.
    pub(crate) fn stderr() -> Self {
        Self::new(std::io::stderr().is_terminal())
    }

    fn new(terminal: bool) -> Self {
        Self {
            on: terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Errors and failures.
    pub(crate) fn red_bold(self, text: &str) -> String {
        self.paint("1;31", text)
    }

    /// Success.
    pub(crate) fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Warnings.
    pub(crate) fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Hints and headings.
    pub(crate) fn cyan_bold(self, text: &str) -> String {
        self.paint("1;36", text)
    }

    /// Secondary text.
    pub(crate) fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    /// Headings.
    pub(crate) fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
}
