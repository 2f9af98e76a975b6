//! Errors from reading and checking a scene.ply. Every message is one line and names
//! the file, and where it applies the element and the record index, so a user can find
//! the fault with a hex editor or a text editor.

use std::fmt;

/// A scene file that could not be read or failed validation.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {problem}")]
pub struct SceneError {
    /// The file as the caller named it.
    pub file: String,
    pub problem: Problem,
}

/// What is wrong, independent of which file it was found in.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("file is empty")]
    Empty,
    #[error("not a PLY file (it does not start with a 'ply' line)")]
    NotPly,
    #[error("header: {0}")]
    Header(String),
    /// A fault in a whole element (its declaration or its extent).
    #[error("element {element}: {detail}")]
    Element { element: Elem, detail: String },
    /// A fault in one record of an element.
    #[error("element {element} {index}: {detail}")]
    Record { element: Elem, index: u64, detail: String },
    #[error("{0} bytes of unexpected data after the last element")]
    TrailingData(u64),
}

/// The two elements of a scene.ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    Vertex,
    Adjacency,
}

impl Elem {
    pub fn name(self) -> &'static str {
        match self {
            Elem::Vertex => "vertex",
            Elem::Adjacency => "adjacency",
        }
    }
}

impl fmt::Display for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Problem {
    pub fn header(detail: impl Into<String>) -> Self {
        Problem::Header(one_line(&detail.into()))
    }

    pub fn element(element: Elem, detail: impl Into<String>) -> Self {
        Problem::Element { element, detail: detail.into() }
    }

    pub fn record(element: Elem, index: usize, detail: impl Into<String>) -> Self {
        Problem::Record { element, index: index as u64, detail: detail.into() }
    }

    pub fn in_file(self, file: impl Into<String>) -> SceneError {
        SceneError { file: file.into(), problem: self }
    }
}

/// Collapses a multi-line message (ply-rs-bw reports parse errors over several lines)
/// into one line.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
