//! Progress on stderr for every step that can take more than a second on a large
//! scene (reading, cutting, packing, planning, building the graph, the frame);
//! hidden when stderr is not a terminal, so pipes and logs get only results.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::scene::{LoadedScene, Problem, read_scene_from};

fn on_stderr(bar: ProgressBar) -> ProgressBar {
    bar.set_draw_target(if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    });
    bar
}

/// A step of unknown length: a spinner with what is being done and the time so far.
pub fn spinner(message: impl Into<String>) -> ProgressBar {
    let bar = on_stderr(ProgressBar::no_length());
    bar.set_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"));
    bar.set_message(message.into());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// A step of `len` items: `label`, a bar, the count and the time left.
pub fn bar(len: u64, label: &str) -> ProgressBar {
    let bar = on_stderr(ProgressBar::new(len));
    let template = format!("{label} [{{bar:30}}] {{pos}}/{{len}} {{eta}}");
    bar.set_style(ProgressStyle::with_template(&template).expect("valid template").progress_chars("=> "));
    bar
}

/// Reads and validates `path` with a bar over the bytes read.
pub fn load_scene(path: &Path) -> anyhow::Result<LoadedScene> {
    let name = path.display().to_string();
    let open = || -> std::io::Result<(std::fs::File, u64)> {
        let f = std::fs::File::open(path)?;
        let len = f.metadata()?.len();
        Ok((f, len))
    };
    let (file, len) = open().map_err(|e| Problem::Io(e).in_file(&name))?;
    let bar = on_stderr(ProgressBar::new(len));
    bar.set_style(
        ProgressStyle::with_template("reading {msg} [{bar:30}] {bytes}/{total_bytes} {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(name.clone());
    let loaded = read_scene_from(&name, bar.wrap_read(file), Some(len));
    bar.finish_and_clear();
    Ok(loaded?)
}

/// Draws what a plan or render reports (see [`crate::device::Progress`]): a bar for a
/// step of known length, a spinner for one of unknown length.
pub struct Steps {
    bar: ProgressBar,
}

impl Steps {
    pub fn new() -> Steps {
        let bar = spinner("");
        Steps { bar }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Default for Steps {
    fn default() -> Self {
        Steps::new()
    }
}

impl crate::device::Progress for Steps {
    fn step(&self, what: &str, items: Option<u64>) {
        let template = match items {
            Some(n) => {
                self.bar.set_length(n);
                self.bar.set_position(0);
                "{msg} [{bar:30}] {pos}/{len} {eta}"
            }
            None => "{spinner} {msg} {elapsed}",
        };
        self.bar.set_style(ProgressStyle::with_template(template).expect("valid template").progress_chars("=> "));
        self.bar.set_message(what.to_string());
    }

    fn item(&self) {
        self.bar.inc(1);
    }
}
