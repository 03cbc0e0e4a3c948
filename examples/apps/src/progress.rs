//! Progress bars for long runs, hidden when stderr is not a terminal (logs, CI, pipes).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar over `steps` steps labelled `what`; hidden unless stderr is a terminal and
/// `enabled`.
pub fn steps(steps: u64, what: &str, enabled: bool) -> ProgressBar {
    if !enabled || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(steps);
    let style = ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} steps ({elapsed}, eta {eta})")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(what.to_string());
    bar
}
