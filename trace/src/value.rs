//! One value type for both formats' values.

use std::collections::BTreeMap;
use std::fmt;

/// A value of a model's variable or of an action's parameter.
///
/// TLC's JSON does not say what an array was (a tuple, a sequence, a set, or a function whose
/// domain is 1..n all come out as arrays), so every TLC array is a [`Value::List`]; TLC's
/// records and its other functions (keyed by the text of each key) are [`Value::Record`]s. ITF
/// says more: `#set`, `#map`, `#tup`, and Quint's variants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Bool(bool),
    Int(i128),
    /// An integer beyond `i128`, as its decimal text (`-` and digits, no leading zeros).
    BigInt(String),
    Str(String),
    /// A tuple or a sequence (and, from TLC, any array).
    List(Vec<Value>),
    /// A set, its elements in the order the trace gave them.
    Set(Vec<Value>),
    /// A map (ITF's `#map`), its pairs in the order the trace gave them.
    Map(Vec<(Value, Value)>),
    Record(BTreeMap<String, Value>),
    /// A Quint variant: `{"tag": "Some", "value": 3}`; a tag without a value holds the empty
    /// tuple.
    Variant {
        tag: String,
        value: Box<Value>,
    },
    /// ITF's `#unserializable`: a value the model checker could not write, as its text.
    Unserializable(String),
}

impl Value {
    /// The integer, if this is one that fits an `i128`.
    pub fn as_int(&self) -> Option<i128> {
        match self {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(text) => Some(text),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The integer that decimal `text` (an optional `-`, then digits) says, however large:
    /// `None` when it is no such text.
    pub(crate) fn integer(text: &str) -> Option<Value> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if let Ok(n) = text.parse::<i128>() {
            return Some(Value::Int(n));
        }
        let digits = digits.trim_start_matches('0');
        let sign = if negative { "-" } else { "" };
        Some(Value::BigInt(format!("{sign}{digits}")))
    }
}

fn write_list<T>(
    f: &mut fmt::Formatter<'_>,
    items: impl IntoIterator<Item = T>,
    mut each: impl FnMut(&mut fmt::Formatter<'_>, T) -> fmt::Result,
) -> fmt::Result {
    for (n, item) in items.into_iter().enumerate() {
        if n > 0 {
            f.write_str(", ")?;
        }
        each(f, item)?;
    }
    Ok(())
}

/// Quint's notation: `Set(1, 2)`, `Map(1 -> Ok)`, `[1, 2]`, `{ a: 1 }`, `Some(3)`, `None`,
/// strings as JSON strings.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::BigInt(text) => f.write_str(text),
            Value::Str(text) => write!(f, "{}", serde_json::Value::String(text.clone())),
            Value::List(items) => {
                f.write_str("[")?;
                write_list(f, items, |f, item| write!(f, "{item}"))?;
                f.write_str("]")
            }
            Value::Set(items) => {
                f.write_str("Set(")?;
                write_list(f, items, |f, item| write!(f, "{item}"))?;
                f.write_str(")")
            }
            Value::Map(pairs) => {
                f.write_str("Map(")?;
                write_list(f, pairs, |f, (key, value)| write!(f, "{key} -> {value}"))?;
                f.write_str(")")
            }
            Value::Record(fields) => {
                f.write_str("{ ")?;
                write_list(f, fields, |f, (name, value)| write!(f, "{name}: {value}"))?;
                f.write_str(" }")
            }
            Value::Variant { tag, value } => match value.as_ref() {
                Value::List(items) if items.is_empty() => f.write_str(tag),
                value => write!(f, "{tag}({value})"),
            },
            Value::Unserializable(text) => write!(f, "<unserializable {text}>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_beyond_i128_keep_their_digits() {
        assert_eq!(Value::integer("-42"), Some(Value::Int(-42)));
        assert_eq!(
            Value::integer("170141183460469231731687303715884105728"),
            Some(Value::BigInt(
                "170141183460469231731687303715884105728".into()
            ))
        );
        assert_eq!(
            Value::integer("-000340282366920938463463374607431768211456"),
            Some(Value::BigInt(
                "-340282366920938463463374607431768211456".into()
            ))
        );
        for not_an_integer in ["", "-", "1.5", "1e3", "+1", "12a"] {
            assert_eq!(Value::integer(not_an_integer), None, "{not_an_integer}");
        }
    }

    #[test]
    fn shown_in_quint_notation() {
        let value = Value::Record(BTreeMap::from([
            (
                "calls".to_string(),
                Value::Set(vec![Value::Int(1), Value::Int(2)]),
            ),
            (
                "cache".to_string(),
                Value::Map(vec![(
                    Value::Int(1),
                    Value::Variant {
                        tag: "Ok".into(),
                        value: Box::new(Value::List(vec![])),
                    },
                )]),
            ),
            (
                "told".to_string(),
                Value::List(vec![Value::Str("a\"b".into())]),
            ),
        ]));
        assert_eq!(
            value.to_string(),
            r#"{ cache: Map(1 -> Ok), calls: Set(1, 2), told: ["a\"b"] }"#
        );
    }
}
