//! The YAML parser's errors (scenarios, compose files, suites) in the project's words: serde-saphyr's own messages speak to a Rust
//! programmer ("set DuplicateKeyPolicy in Options", "use Option<String>"); a scenario's author
//! gets what is wrong with the YAML and the limit that was reached.

use std::borrow::Cow;

use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Error, MessageFormatter, UserMessageFormatter};

/// The largest scenario or compose file read (a scenario is a few KB; more is not one).
pub const MAX_FILE_BYTES: u64 = 4 << 20;

pub struct ScenarioWording;

/// A parser error as `FILE:line:column: message` (`FILE: message` when it has no position).
pub fn in_file(file: &str, e: &Error) -> String {
    let message = e.render_with_formatter(&ScenarioWording);
    let message = message.split(" at line ").next().unwrap_or_default();
    match e.location() {
        Some(at) if at.line() > 0 => format!("{file}:{}:{}: {message}", at.line(), at.column()),
        _ => format!("{file}: {message}"),
    }
}

impl MessageFormatter for ScenarioWording {
    fn format_message<'a>(&self, err: &'a Error) -> Cow<'a, str> {
        match err {
            Error::WithSnippet { error, .. } => self.format_message(error),
            Error::MultipleDocuments { .. } => Cow::Borrowed(
                "a scenario is one YAML document, and a second one starts here (`---`)",
            ),
            Error::NullIntoString { .. } => Cow::Borrowed("needs a value here, found none (null)"),
            Error::DuplicateMappingKey { key: Some(k), .. } => {
                Cow::Owned(format!("`{k}` is given twice in one mapping"))
            }
            Error::DuplicateMappingKey { key: None, .. } => {
                Cow::Borrowed("a key is given twice in one mapping")
            }
            Error::Eof { .. } => Cow::Borrowed("the file ends in the middle of a value"),
            Error::Budget { breach, .. } => Cow::Owned(budget(breach)),
            // serde's and the parser's words for a value of the wrong shape.
            Error::SerdeInvalidType {
                unexpected,
                expected,
                ..
            }
            | Error::SerdeInvalidValue {
                unexpected,
                expected,
                ..
            } => Cow::Owned(format!(
                "found {}, expected {expected}",
                found_words(unexpected)
            )),
            Error::SerdeInvalidLength { len, expected, .. } => {
                Cow::Owned(format!("found {len} values, expected {expected}"))
            }
            Error::ExternallyTaggedEnumExpectedScalarOrMapping { .. } => {
                Cow::Borrowed("expected a name, or a mapping { name: settings }")
            }
            Error::ExpectedStringKeyForExternallyTaggedEnum { .. } => {
                Cow::Borrowed("expected a name as the key of this mapping")
            }
            Error::UnexpectedValueForUnitEnumVariant { .. } => {
                Cow::Borrowed("this name takes no settings")
            }
            Error::ExpectedMappingEndAfterEnumVariantValue { .. } => Cow::Borrowed(
                "a mapping { name: settings } holds one name; start the next with `- ` on a line of its own",
            ),
            Error::InvalidScalar { ty, .. } => Cow::Owned(scalar_expected(ty)),
            Error::InvalidBooleanStrict { .. } => Cow::Borrowed("expected true or false"),
            Error::UnknownAnchor { .. } => {
                Cow::Borrowed("`*name` refers to no anchor `&name` defined before it")
            }
            Error::Message { msg, .. } if msg.contains("did not match any variant") => {
                Cow::Borrowed("a value of the wrong shape here")
            }
            Error::AliasReplayLimitExceeded {
                max_total_replayed_events,
                ..
            } => Cow::Owned(format!(
                "the YAML is too large for a scenario: its aliases (*name) expand to more than {max_total_replayed_events} parser events"
            )),
            Error::AliasExpansionLimitExceeded {
                max_expansions_per_anchor,
                ..
            } => Cow::Owned(format!(
                "the YAML is too large for a scenario: an anchor (&name) is used more than {max_expansions_per_anchor} times"
            )),
            Error::AliasReplayStackDepthExceeded { max_depth, .. } => Cow::Owned(format!(
                "the YAML is too large for a scenario: aliases (*name) nest more than {max_depth} deep"
            )),
            other => match UserMessageFormatter.format_message(other) {
                Cow::Borrowed(text) => plain(text),
                Cow::Owned(text) => Cow::Owned(plain(&text).into_owned()),
            },
        }
    }
}

/// A parser limit, with its number: the count at the breach is one past the limit.
fn budget(breach: &BudgetBreach) -> String {
    let past = |count: usize, what: &str| {
        format!(
            "the YAML is too large for a scenario: more than {} {what}",
            count.saturating_sub(1)
        )
    };
    match breach {
        BudgetBreach::Nodes { nodes } => past(*nodes, "values (keys, scalars, lists, mappings)"),
        BudgetBreach::Events { events } => past(*events, "parser events"),
        BudgetBreach::Aliases { aliases } => past(*aliases, "aliases (*name)"),
        BudgetBreach::Anchors { anchors } => past(*anchors, "anchors (&name)"),
        BudgetBreach::Depth { depth } => past(*depth, "levels of nesting"),
        BudgetBreach::Documents { documents } => past(*documents, "documents"),
        _ => "the YAML is too large or too complex for a scenario".to_string(),
    }
}

/// serde's name for what it found, as the YAML's author calls it.
fn found_words(unexpected: &str) -> &str {
    match unexpected {
        "map" => "a mapping",
        "sequence" => "a list",
        "unit value" | "unit" => "nothing",
        other => other,
    }
}

/// What a scalar of the parser's type `ty` must look like, with its range for a number
/// (`processes: 4294967296` is a whole number, but not one a u32 holds).
fn scalar_expected(ty: &str) -> String {
    let whole = |low: &str, high: &str| format!("expected a whole number from {low} to {high}");
    match ty {
        "u8" => whole("0", "255"),
        "u16" => whole("0", "65535"),
        "u32" => whole("0", &u32::MAX.to_string()),
        "u64" | "usize" => whole("0", &u64::MAX.to_string()),
        "u128" => whole("0", &u128::MAX.to_string()),
        "i8" => whole("-128", "127"),
        "i16" => whole("-32768", "32767"),
        "i32" => whole(&i32::MIN.to_string(), &i32::MAX.to_string()),
        "i64" | "isize" => whole(&i64::MIN.to_string(), &i64::MAX.to_string()),
        "floating point" | "f32" | "f64" => "expected a finite number (like 0.5)".into(),
        "boolean" => "expected true or false".into(),
        "enum variant" | "string" => "expected a name (plain text)".into(),
        "char" => "expected one character".into(),
        other => format!("expected a {other} here"),
    }
}

/// Serde's type words as a scenario's author reads them.
fn plain(text: &str) -> Cow<'_, str> {
    const WORDS: &[(&str, &str)] = &[
        ("invalid u16", "expected a whole number from 0 to 65535"),
        (
            "invalid u32",
            "expected a whole number from 0 to 4294967295",
        ),
        (
            "invalid u64",
            "expected a whole number from 0 to 18446744073709551615",
        ),
        (
            "invalid usize",
            "expected a whole number from 0 to 18446744073709551615",
        ),
        ("invalid f64", "expected a finite number (like 0.5)"),
        (
            "invalid floating point",
            "expected a finite number (like 0.5)",
        ),
        ("invalid enum variant", "expected a name (plain text)"),
        (
            "expected mapping start",
            "expected a mapping ({ key: value, ... })",
        ),
        (
            "expected sequence start",
            "expected a list ([a, b] or `- a` lines)",
        ),
        ("expected string scalar", "expected text (one value)"),
    ];
    for (library, ours) in WORDS {
        if let Some(rest) = text.strip_prefix(library) {
            return Cow::Owned(format!("{ours}{rest}"));
        }
    }
    // serde's word for an enum's value.
    if text.contains("unknown variant") {
        return Cow::Owned(text.replace("unknown variant", "unknown value"));
    }
    Cow::Borrowed(text)
}
