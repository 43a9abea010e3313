//! The YAML fragments a mapping holds (fault steps, `reached:` predicates), kept as written (keys
//! in their order), with the trace's parameters put in, and written back as YAML.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A YAML value of a fragment: what the scenario's own types read once it is in a scenario.
#[derive(Clone, Debug, PartialEq)]
pub enum Fragment {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    List(Vec<Fragment>),
    Map(Vec<(String, Fragment)>),
}

impl<'de> Deserialize<'de> for Fragment {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fragment;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a YAML value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Fragment, E> {
                Ok(Fragment::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Fragment, E> {
                Ok(Fragment::Null)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Fragment, E> {
                Ok(Fragment::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Fragment, E> {
                Ok(Fragment::Int(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Fragment, E> {
                Ok(Fragment::Int(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Fragment, E> {
                Ok(Fragment::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Fragment, E> {
                Ok(Fragment::Str(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Fragment, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Fragment::List(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fragment, A::Error> {
                let mut pairs = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Fragment>()? {
                    pairs.push((key, value));
                }
                Ok(Fragment::Map(pairs))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl Fragment {
    /// The value of key `key`, if this is a map that has it.
    pub fn get(&self, key: &str) -> Option<&Fragment> {
        match self {
            Fragment::Map(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn keys(&self) -> Vec<&str> {
        match self {
            Fragment::Map(pairs) => pairs.iter().map(|(k, _)| k.as_str()).collect(),
            _ => Vec::new(),
        }
    }

    /// Every string with `{...}` in it given to `fill`, which returns the new value (a string
    /// that was nothing but one placeholder can become an integer: `step: "{fault}"`).
    pub fn substitute<E>(
        &self,
        fill: &mut impl FnMut(&str) -> Result<Fragment, E>,
    ) -> Result<Fragment, E> {
        Ok(match self {
            Fragment::Str(text) if text.contains('{') => fill(text)?,
            Fragment::List(items) => Fragment::List(
                items
                    .iter()
                    .map(|item| item.substitute(fill))
                    .collect::<Result<_, _>>()?,
            ),
            Fragment::Map(pairs) => Fragment::Map(
                pairs
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), v.substitute(fill)?)))
                    .collect::<Result<_, _>>()?,
            ),
            other => other.clone(),
        })
    }
}

/// A string as YAML reads it back as the same string: plain when it is a simple word that reads
/// as no other type, else double-quoted (JSON's escapes are YAML's).
pub fn scalar(text: &str) -> String {
    let word = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        && text.starts_with(|c: char| c.is_ascii_alphabetic())
        && !matches!(
            text.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    // Durations (`8s`, `500ms`) stay as a scenario writes them.
    let duration = {
        let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        !digits.is_empty()
            && digits.len() < text.len()
            && digits.chars().all(|c| c.is_ascii_digit())
            && matches!(&text[digits.len()..], "ms" | "s" | "m" | "h")
    };
    if word || duration {
        text.to_string()
    } else {
        serde_json::Value::String(text.to_string()).to_string()
    }
}

/// A key as a scenario writes it: plain when it is a word (`on`, `armed-after`: a scenario's keys
/// are strings whatever they spell), else quoted.
pub fn key_scalar(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        key.to_string()
    } else {
        scalar(key)
    }
}

/// One line of YAML flow style: `{ do: restart, target: [om1, om2] }`.
impl fmt::Display for Fragment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fragment::Null => f.write_str("null"),
            Fragment::Bool(b) => write!(f, "{b}"),
            Fragment::Int(n) => write!(f, "{n}"),
            Fragment::Float(x) => write!(f, "{x:?}"),
            Fragment::Str(text) => f.write_str(&scalar(text)),
            Fragment::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Fragment::Map(pairs) if pairs.is_empty() => f.write_str("{}"),
            Fragment::Map(pairs) => {
                f.write_str("{ ")?;
                for (i, (key, value)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {value}", key_scalar(key))?;
                }
                f.write_str(" }")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_read_back_as_strings() {
        assert_eq!(scalar("om1"), "om1");
        assert_eq!(scalar("8s"), "8s");
        assert_eq!(scalar("1"), "\"1\"");
        assert_eq!(scalar("yes"), "\"yes\"");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(scalar("$2.x(\"R\")"), "\"$2.x(\\\"R\\\")\"");
        assert_eq!(scalar(""), "\"\"");
    }

    #[test]
    fn flow_style_keeps_the_order_written() {
        let fragment: Fragment =
            serde_saphyr::from_str("{ do: restart, target: [om1, om2], for: 8s, n: 3 }").unwrap();
        assert_eq!(
            fragment.to_string(),
            "{ do: restart, target: [om1, om2], for: 8s, n: 3 }"
        );
    }
}
