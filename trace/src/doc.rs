//! The document being read: its file name and text (for the errors' positions), and the
//! checks of a JSON value's shape that both readers share.

use serde_json::{Map, Value as Json};

use crate::error::{quoted, ErrorKind, Position, TraceError};
use crate::json_path::{line_and_column, At};
use crate::value::Value;

pub(crate) struct Doc<'t> {
    pub file: &'t str,
    pub text: &'t str,
}

pub(crate) type Object = Map<String, Json>;

impl Doc<'_> {
    /// An error at `at`: its position found in the text, its path, and `message`.
    pub fn error(&self, at: &At, message: impl Into<String>) -> TraceError {
        let position = at
            .offset_in(self.text)
            .and_then(|offset| line_and_column(self.text, offset))
            .map(|(line, column)| Position { line, column });
        TraceError {
            kind: ErrorKind::WrongShape,
            file: self.file.to_string(),
            position,
            path: at.to_string(),
            message: message.into(),
        }
    }

    /// "expected WHAT, found ..." at `at`.
    pub fn expected(&self, at: &At, what: &str, found: &Json) -> TraceError {
        self.error(at, format!("expected {what}, found {}", described(found)))
    }

    pub fn object<'j>(
        &self,
        json: &'j Json,
        at: &At,
        what: &str,
    ) -> Result<&'j Object, TraceError> {
        json.as_object()
            .ok_or_else(|| self.expected(at, what, json))
    }

    pub fn array<'j>(&self, json: &'j Json, at: &At, what: &str) -> Result<&'j [Json], TraceError> {
        json.as_array()
            .map(Vec::as_slice)
            .ok_or_else(|| self.expected(at, what, json))
    }

    pub fn string<'j>(&self, json: &'j Json, at: &At, what: &str) -> Result<&'j str, TraceError> {
        json.as_str().ok_or_else(|| self.expected(at, what, json))
    }

    /// The member `key` of `object` (which is at `at`); missing, the error is at the object
    /// and names the keys it has.
    pub fn member<'j>(
        &self,
        object: &'j Object,
        at: &At,
        key: &str,
        what: &str,
    ) -> Result<&'j Json, TraceError> {
        object.get(key).ok_or_else(|| {
            self.error(
                at,
                format!("expected {} ({what}); {}", quoted(key), keys_of(object)),
            )
        })
    }

    /// An array of exactly `len` elements.
    pub fn tuple<'j>(
        &self,
        json: &'j Json,
        at: &At,
        len: usize,
        what: &str,
    ) -> Result<&'j [Json], TraceError> {
        match json.as_array() {
            Some(items) if items.len() == len => Ok(items),
            _ => Err(self.expected(at, what, json)),
        }
    }

    /// An integer as JSON writes it. Past `u64`, serde_json keeps only a float, so the digits
    /// are read again from the text.
    pub fn integer(&self, json: &Json, at: &At, what: &str) -> Result<Value, TraceError> {
        let Json::Number(number) = json else {
            return Err(self.expected(at, what, json));
        };
        if let Some(n) = number.as_i64() {
            return Ok(Value::Int(n.into()));
        }
        if let Some(n) = number.as_u64() {
            return Ok(Value::Int(n.into()));
        }
        let literal = at.offset_in(self.text).and_then(|start| {
            let rest = self.text.get(start..)?;
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '-'))
                .unwrap_or(rest.len());
            Value::integer(rest.get(..end)?).filter(|_| {
                // A fraction or an exponent follows: not an integer after all.
                !matches!(rest.as_bytes().get(end), Some(b'.' | b'e' | b'E'))
            })
        });
        literal.ok_or_else(|| self.expected(at, what, json))
    }

    /// A state number or an index: a whole number from `min` up.
    pub fn count(&self, json: &Json, at: &At, min: u64, what: &str) -> Result<usize, TraceError> {
        json.as_u64()
            .filter(|n| *n >= min)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| self.expected(at, what, json))
    }
}

/// What a JSON value is, for a message: `a string `x``, `an object with keys `a`, `b``.
pub(crate) fn described(json: &Json) -> String {
    match json {
        Json::Null => "null".to_string(),
        Json::Bool(b) => format!("{b}"),
        Json::Number(n) => format!("the number {}", quoted(&n.to_string())),
        Json::String(text) => format!("the string {}", quoted(text)),
        Json::Array(items) if items.is_empty() => "an empty array".to_string(),
        Json::Array(items) => format!("an array of {}", items.len()),
        Json::Object(object) if object.is_empty() => "an empty object".to_string(),
        Json::Object(object) => format!("an object with {}", key_list(object)),
    }
}

fn keys_of(object: &Object) -> String {
    if object.is_empty() {
        "it is empty".to_string()
    } else {
        format!("it has {}", key_list(object))
    }
}

/// `keys `a`, `b`` (at most eight of them).
fn key_list(object: &Object) -> String {
    const SHOWN: usize = 8;
    let mut names: Vec<String> = object.keys().take(SHOWN).map(|key| quoted(key)).collect();
    if object.len() > SHOWN {
        names.push(format!("and {} more", object.len() - SHOWN));
    }
    let noun = if object.len() == 1 { "key" } else { "keys" };
    format!("{noun} {}", names.join(", "))
}
