//! Why a trace could not be read, with where in its file.

use std::fmt;

/// What kind of trouble a [`TraceError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file could not be opened or read.
    Unreadable,
    /// The file is larger than [`crate::MAX_TRACE_BYTES`].
    TooLarge,
    /// The text is not JSON (or not UTF-8).
    NotJson,
    /// The JSON is not a trace of a format this crate reads, or a part of it has the wrong shape.
    WrongShape,
}

/// A line and a column of the JSON text, both counted from 1 (the column in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// A trace that could not be read: the file, the position in its text when it is known, the
/// JSON path of the part at fault (`counterexample.action[3][1].name`, empty for the whole
/// document), and what was expected there. Shown as `FILE:LINE:COLUMN: PATH: MESSAGE`, the way a
/// scenario's errors are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub kind: ErrorKind,
    pub file: String,
    pub position: Option<Position>,
    pub path: String,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(at) = self.position {
            write!(f, ":{}:{}", at.line, at.column)?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for TraceError {}

/// How many characters of a value from the file a message shows.
const SHOWN_CHARS: usize = 60;

/// `text` from a trace file as a message shows it: quoted, control characters escaped (a
/// message stays one line), cut after [`SHOWN_CHARS`] characters with its length said.
pub(crate) fn quoted(text: &str) -> String {
    let total = text.chars().count();
    let mut out = String::from("`");
    for c in text.chars().take(SHOWN_CHARS) {
        if c == '`' {
            out.push_str("\\`");
        } else if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('`');
    if total > SHOWN_CHARS {
        out.push_str(&format!(" (the first {SHOWN_CHARS} of {total} characters)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_file_position_path_and_message() {
        let error = TraceError {
            kind: ErrorKind::WrongShape,
            file: "cex.json".into(),
            position: Some(Position { line: 3, column: 7 }),
            path: "state[0]".into(),
            message: "expected a pair".into(),
        };
        assert_eq!(error.to_string(), "cex.json:3:7: state[0]: expected a pair");
        let whole = TraceError {
            position: None,
            path: String::new(),
            ..error
        };
        assert_eq!(whole.to_string(), "cex.json: expected a pair");
    }

    #[test]
    fn quoted_values_stay_on_one_line_and_are_cut() {
        assert_eq!(quoted("a\nb`"), "`a\\nb\\``");
        let long = quoted(&"x".repeat(500));
        assert!(long.ends_with("(the first 60 of 500 characters)"), "{long}");
    }
}
