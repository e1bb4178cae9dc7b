//! `completions` and `man`: generated from the command-line definition itself, so they
//! never drift from what `mcpctl --help` says.

use clap::CommandFactory;

use crate::cli::Cli;
use crate::error::CliError;

/// Prints the completion script of `shell` on stdout.
pub(crate) fn completions(shell: clap_complete::Shell) -> u8 {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "mcpctl", &mut script);
    crate::term::render::out(&String::from_utf8_lossy(&script));
    0
}

/// Prints the manual page (roff) on stdout.
pub(crate) fn man_page() -> Result<u8, CliError> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|e| CliError::failure(format!("cannot render the manual page: {e}")))?;
    crate::term::render::out(&String::from_utf8_lossy(&page));
    Ok(0)
}
