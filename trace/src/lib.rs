//! Model checkers' counterexamples read into one trace type: TLC's `-dumpTrace json` (the
//! shape written since 2026-01, `{"counterexample": {"action", "state"}, "vars"}`, and the one
//! before, `{"action", "state"}`) and ITF (Apalache's Informal Trace Format, with Quint's
//! `mbt::actionTaken` and `mbt::nondetPicks`). The format is told from the document's shape.
//! A trace that does not read gives a [`TraceError`] with its file, its position and what was
//! expected there. A plain library: no Docker, no async.

mod doc;
mod error;
mod itf;
mod json_path;
mod tlc;
mod value;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

pub use error::{ErrorKind, Position, TraceError};
pub use value::Value;

use doc::{described, Doc};
use json_path::At;

/// The largest trace file read: counterexamples are short, and a larger file is more likely a
/// wrong file than a trace.
pub const MAX_TRACE_BYTES: u64 = 64 * 1024 * 1024;

/// The values of a model's variables, by name.
pub type State = BTreeMap<String, Value>;

/// Which format a trace was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// TLC's `-dumpTrace json` since 2026-01: `{"counterexample": {...}, "vars": [...]}`.
    Tlc,
    /// TLC's `-dumpTrace json` from 2022 to 2026-01: `{"action": [...], "state": [...]}`.
    TlcBefore2026,
    /// ITF (`{"vars": [...], "states": [...]}`), from Apalache or Quint.
    Itf,
}

/// A counterexample: the initial state, then each step's action and the state after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub format: Format,
    /// The model's variables, in the trace's order (Quint's `mbt::` fields are not variables).
    pub vars: Vec<String>,
    pub initial: State,
    pub steps: Vec<Step>,
    /// For a lasso (a liveness counterexample): where the behaviour goes after the last state.
    pub lasso: Option<Lasso>,
}

/// One step: the action taken and the state it led to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub action: Action,
    pub state: State,
}

/// An action as the trace names it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Action {
    /// TLC's action name, Quint's `mbt::actionTaken`; `None` for ITF that does not name its
    /// actions (Apalache's, or Quint's without `--mbt`).
    pub name: Option<String>,
    /// TLC's `parameters`, each with its value from the action's `context` (in the order
    /// `parameters` lists them; every `context` entry when there is no `parameters`), or
    /// Quint's `mbt::nondetPicks` (Some unwrapped, None left out), sorted by name.
    pub params: Vec<(String, Value)>,
    /// Where TLC says the action is defined in the spec.
    pub location: Option<SpecLocation>,
}

impl Action {
    /// The value of parameter `name`.
    pub fn param(&self, name: &str) -> Option<&Value> {
        self.params
            .iter()
            .find(|(param, _)| param == name)
            .map(|(_, value)| value)
    }
}

/// A span of a TLA+ module, from TLC's `location`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecLocation {
    pub module: String,
    pub begin_line: usize,
    pub begin_column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

/// After its last state, the behaviour returns to state `to` (0 the initial state, `k` the
/// state after step `k`) and repeats from there forever.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lasso {
    pub to: usize,
    /// The action that leads back, when the trace names it (TLC does; ITF's `loop` does not).
    pub action: Option<Action>,
}

impl Trace {
    /// The state after step `index` (0 the initial state, `k` after step `k`).
    pub fn state(&self, index: usize) -> Option<&State> {
        match index {
            0 => Some(&self.initial),
            k => self.steps.get(k - 1).map(|step| &step.state),
        }
    }
}

/// Reads the trace in file `path`.
pub fn read_file(path: &Path) -> Result<Trace, TraceError> {
    let file = path.display().to_string();
    let failed = |kind, message: String| TraceError {
        kind,
        file: file.clone(),
        position: None,
        path: String::new(),
        message,
    };
    let opened = std::fs::File::open(path)
        .map_err(|e| failed(ErrorKind::Unreadable, format!("cannot open the trace: {e}")))?;
    let mut bytes = Vec::new();
    opened
        .take(MAX_TRACE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| failed(ErrorKind::Unreadable, format!("cannot read the trace: {e}")))?;
    if bytes.len() as u64 > MAX_TRACE_BYTES {
        return Err(failed(
            ErrorKind::TooLarge,
            format!("the trace is larger than {MAX_TRACE_BYTES} bytes, the most read"),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        failed(
            ErrorKind::NotJson,
            format!(
                "not a JSON trace: not UTF-8 text (at byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    parse(&text, &file)
}

/// Reads a trace from `text`; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Trace, TraceError> {
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| TraceError {
        kind: ErrorKind::NotJson,
        file: file.to_string(),
        position: (e.line() > 0).then(|| Position {
            line: e.line(),
            column: e.column(),
        }),
        path: String::new(),
        message: format!("not a JSON trace: {}", without_position(&e)),
    })?;
    let doc = Doc { file, text };
    let shape = json.as_object().and_then(|root| {
        if root.contains_key("counterexample") {
            Some(Format::Tlc)
        } else if root.contains_key("states") {
            Some(Format::Itf)
        } else if root.contains_key("state") && root.contains_key("action") {
            Some(Format::TlcBefore2026)
        } else {
            None
        }
    });
    match shape {
        Some(Format::Itf) => itf::read(&doc, &json),
        Some(tlc_shape) => tlc::read(&doc, &json, tlc_shape),
        None => Err(doc.error(
            &At::ROOT,
            format!(
                "expected a trace: TLC's -dumpTrace json ({{\"counterexample\": {{\"action\", \
                 \"state\"}}, \"vars\"}}, or {{\"action\", \"state\"}} before 2026) or ITF \
                 ({{\"vars\", \"states\"}}); found {}",
                described(&json)
            ),
        )),
    }
}

/// serde_json's message without its " at line L column C", which the error's position says.
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_string(),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_is_not_json_says_where() {
        let error = parse("{\"states\": [1,\n  ]}", "t.json").unwrap_err();
        assert_eq!(error.kind, ErrorKind::NotJson);
        assert_eq!(error.position, Some(Position { line: 2, column: 3 }));
        assert!(
            error
                .to_string()
                .starts_with("t.json:2:3: not a JSON trace: "),
            "{error}"
        );
    }

    #[test]
    fn a_document_of_neither_format_says_what_a_trace_looks_like() {
        let error = parse("\n  {\"steps\": []}", "t.json").unwrap_err();
        assert_eq!(error.kind, ErrorKind::WrongShape);
        assert_eq!(
            error.to_string(),
            "t.json:2:3: expected a trace: TLC's -dumpTrace json ({\"counterexample\": \
             {\"action\", \"state\"}, \"vars\"}, or {\"action\", \"state\"} before 2026) or ITF \
             ({\"vars\", \"states\"}); found an object with key `steps`"
        );
        let array = parse("[1]", "t.json").unwrap_err();
        assert!(
            array.to_string().ends_with("found an array of 1"),
            "{array}"
        );
    }

    #[test]
    fn a_missing_file_is_an_error_not_a_panic() {
        let missing = read_file(Path::new("/nonexistent/trace.json")).unwrap_err();
        assert_eq!(missing.kind, ErrorKind::Unreadable);
        assert!(missing
            .to_string()
            .starts_with("/nonexistent/trace.json: cannot open the trace: "));
    }

    #[test]
    fn deep_nesting_is_refused_by_the_json_parser_not_a_stack_overflow() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let error = parse(&deep, "deep.json").unwrap_err();
        assert_eq!(error.kind, ErrorKind::NotJson);
        assert!(error.message.contains("recursion limit"), "{error}");
    }
}
