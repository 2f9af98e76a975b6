//! One module per CLI subcommand: its clap `Args` and its `run`.
pub mod cameras;
pub mod compare;
pub mod heap;
pub mod info;
pub mod outputs;
pub mod partition;
pub mod progress;
pub mod reference;
pub mod render;

/// A run that worked but whose requested check failed (e.g. `--require-fit`): main
/// prints it like any error and exits with code 2 instead of 1.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CheckFailed(pub String);
pub mod bench;
pub mod device_args;
pub mod synth;
pub mod tune;

/// One line: the chain of causes joined by ": ", a cause left out when the message
/// before it already ends with it (errors that print their source as well as return it).
pub fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// `s` with control characters escaped (`\n`, `\u{1b}`), so that a message quoting
/// input stays one line and cannot drive the terminal.
pub fn printable(s: &str) -> String {
    s.chars().flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect()
}
