//! The YAML parser's errors (scenarios, compose files, suites) in the project's words: serde-saphyr's own messages speak to a Rust
//! programmer ("set DuplicateKeyPolicy in Options", "use Option<String>"); a scenario's author
//! gets what is wrong with the YAML, the names a key takes, and the limit that was reached,
//! with its number.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_saphyr::budget::{Budget, BudgetBreach};
use serde_saphyr::{Error, Location, MessageFormatter, UserMessageFormatter};

use chaos_core::shown::shown;

/// The largest scenario or compose file read (a scenario is a few KB; more is not one).
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// The parser's limits on one file: values (keys, scalars, lists, mappings), parser events,
/// anchors (`&name`), aliases (`*name`), levels of nesting, and the events aliases may replay.
/// A scenario is a few hundred values; these stop a YAML bomb in well under a second.
pub const MAX_VALUES: usize = 250_000;
pub const MAX_EVENTS: usize = 1_000_000;
pub const MAX_ANCHORS: usize = 50_000;
pub const MAX_ALIASES: usize = 50_000;
/// Once a file has this many aliases, each anchor may be used at most
/// [`MAX_ALIASES_PER_ANCHOR`] times on average.
pub const ALIASES_BEFORE_RATIO: usize = 100;
pub const MAX_ALIASES_PER_ANCHOR: usize = 10;
pub const MAX_DEPTH: usize = 64;
pub const MAX_REPLAYED_EVENTS: usize = 1_000_000;
pub const MAX_SCALAR_BYTES: usize = 64 << 20;
pub const MAX_MERGE_KEYS: usize = 10_000;

/// Every limit above, as a sentence (what the message of a limit with no words of its own says).
pub fn limits() -> String {
    format!(
        "a file chaos reads is at most {} MiB, {MAX_VALUES} values, {MAX_EVENTS} parser events, \
         {MAX_ANCHORS} anchors (&name), {MAX_ALIASES} aliases (*name; at most \
         {MAX_ALIASES_PER_ANCHOR} per anchor once there are {ALIASES_BEFORE_RATIO}), \
         {MAX_DEPTH} levels of nesting and {MAX_MERGE_KEYS} merge keys (<<), its aliases \
         expand to at most {MAX_REPLAYED_EVENTS} parser events, its text to {} MiB",
        MAX_FILE_BYTES >> 20,
        MAX_SCALAR_BYTES >> 20
    )
}

/// The parser's options with the limits above.
fn options() -> serde_saphyr::Options {
    let mut budget = Budget::default();
    budget.max_nodes = MAX_VALUES;
    budget.max_events = MAX_EVENTS;
    budget.max_anchors = MAX_ANCHORS;
    budget.max_aliases = MAX_ALIASES;
    budget.enforce_alias_anchor_ratio = true;
    budget.alias_anchor_min_aliases = ALIASES_BEFORE_RATIO;
    budget.alias_anchor_ratio_multiplier = MAX_ALIASES_PER_ANCHOR;
    budget.max_depth = MAX_DEPTH;
    budget.max_total_scalar_bytes = MAX_SCALAR_BYTES;
    budget.max_merge_keys = MAX_MERGE_KEYS;
    let mut aliases = serde_saphyr::options::AliasLimits::default();
    aliases.max_total_replayed_events = MAX_REPLAYED_EVENTS;
    aliases.max_replay_stack_depth = MAX_DEPTH;
    serde_saphyr::options! {
        with_snippet: false,
        budget: Some(budget),
        alias_limits: aliases,
    }
}

/// Why a YAML file could not be read as its type: where, the key path as its author wrote it
/// (`faults[0].do`), and what is wrong, in the project's words.
#[derive(Debug)]
pub struct YamlError {
    pub line: u64,
    pub column: u64,
    pub path: String,
    pub message: String,
}

impl YamlError {
    /// The error of file `file` (`FILE:line:column: key.path: message`).
    pub fn in_file(self, file: &std::path::Path) -> super::ScenarioError {
        super::ScenarioError {
            file: file.to_path_buf(),
            line: self.line,
            column: self.column,
            path: self.path,
            message: self.message,
        }
    }
}

/// Parses YAML text as `T` within the limits above, keeping the key path of the first error
/// (serde_path_to_error) and the position serde-saphyr reports.
pub fn parse_yaml<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    let mut key_path = String::new();
    let result = serde_saphyr::with_deserializer_from_str_with_options(text, options(), |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            // `Spanned<T>` wraps its value in a field of its own: not a key the user wrote.
            key_path = super::user_key_path(&e.path().to_string());
            e.into_inner()
        })
    });
    result.map_err(|e| {
        // A key given twice: the path names the key itself (`faults[0].do`).
        if let Error::DuplicateMappingKey { key: Some(k), .. } = original(&e) {
            key_path = if key_path.is_empty() {
                k.clone()
            } else {
                format!("{key_path}.{k}")
            };
        }
        let at = e.location().unwrap_or(Location::UNKNOWN);
        YamlError {
            line: at.line(),
            column: at.column(),
            path: key_path,
            message: message(&e),
        }
    })
}

/// A parser error's words alone (its position is said in front of them, never after), control
/// characters escaped.
pub fn message(e: &Error) -> String {
    chaos_core::shown::escaped(&ScenarioWording.format_message(original(e)))
}

/// The error behind an alias (a value used through `*name`) or a snippet.
fn original(mut e: &Error) -> &Error {
    while let Error::AliasError { error, .. } | Error::WithSnippet { error, .. } = e {
        e = error;
    }
    e
}

pub struct ScenarioWording;

/// A parser error as `FILE:line:column: message` (`FILE: message` when it has no position).
pub fn in_file(file: &str, e: &Error) -> String {
    let message = message(e);
    match e.location() {
        Some(at) if at.line() > 0 => format!("{file}:{}:{}: {message}", at.line(), at.column()),
        _ => format!("{file}: {message}"),
    }
}

/// What the names a key takes are called, by the type serde reads them as, and the names
/// themselves, from the registries and the scenario's lists (a test holds each list to the
/// names serde accepts).
struct Choices {
    of_type: &'static str,
    noun: &'static str,
    names: fn() -> Vec<String>,
}

const CHOICES: &[Choices] = &[
    Choices {
        of_type: "WorkloadKind",
        noun: "workload kind",
        names: || {
            crate::workloads::names()
                .iter()
                .map(|n| n.to_string())
                .collect()
        },
    },
    Choices {
        of_type: "Action",
        noun: "fault action",
        names: || {
            crate::faults::kinds::names()
                .iter()
                .map(|n| n.to_string())
                .collect()
        },
    },
    Choices {
        of_type: "CheckSpec",
        noun: "check",
        names: || {
            super::CheckSpec::names()
                .iter()
                .map(|n| n.to_string())
                .collect()
        },
    },
    Choices {
        of_type: "PartitionMode",
        noun: "partition mode",
        names: || names_of(super::PARTITION_MODES),
    },
    Choices {
        of_type: "Pick",
        noun: "pick",
        names: || names_of(super::PICKS),
    },
    Choices {
        of_type: "Role",
        noun: "role",
        names: || names_of(super::ROLES),
    },
    Choices {
        of_type: "ReadConsistency",
        noun: "read mode",
        names: || names_of(super::READ_MODES),
    },
    Choices {
        of_type: "OutcomeFilter",
        noun: "outcome",
        names: || names_of(super::OUTCOMES),
    },
    Choices {
        of_type: "JvmEvent",
        noun: "JVM event",
        names: || names_of(super::JVM_EVENTS),
    },
    Choices {
        of_type: "EtagForm",
        noun: "form of the If-Match ETag",
        names: || names_of(super::ETAG_FORMS),
    },
];

/// Each value's YAML name.
pub fn names_of<T: Serialize>(values: &[T]) -> Vec<String> {
    values
        .iter()
        .filter_map(|v| serde_json::to_value(v).ok()?.as_str().map(str::to_owned))
        .collect()
}

/// `` `custom` is not a workload kind; one of: register, set, ... ``
pub fn not_one_of(value: &str, noun: &str, names: &[impl AsRef<str>]) -> String {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    format!(
        "{} is not a {noun}; one of: {}",
        shown(value),
        names.join(", ")
    )
}

/// A name serde did not find among `expected`: the noun of the list it is (any names: `one of`).
fn unknown_name(value: &str, expected: &[&str]) -> String {
    let noun = CHOICES.iter().find(|c| (c.names)() == expected);
    match noun {
        Some(c) => not_one_of(value, c.noun, expected),
        None => format!("{} is not one of: {}", shown(value), expected.join(", ")),
    }
}

/// A YAML tag (`!custom`) where a name of `of_type` belongs: the tag is read as the name.
fn tagged_name(tag: &str, of_type: &str) -> String {
    let tag = format!("!{tag}");
    match CHOICES.iter().find(|c| c.of_type == of_type) {
        Some(c) => format!(
            "{} (a YAML tag) is not a {}; one of: {} (written plain, without `!`)",
            shown(&tag),
            c.noun,
            (c.names)().join(", ")
        ),
        None => format!(
            "{} is a YAML tag, which this key does not take: write its value plain, without `!`",
            shown(&tag)
        ),
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
                Cow::Owned(format!("{} is given twice in one mapping", shown(k)))
            }
            Error::DuplicateMappingKey { key: None, .. } => {
                Cow::Borrowed("a key is given twice in one mapping")
            }
            Error::Eof { .. } => Cow::Borrowed("the file ends in the middle of a value"),
            Error::Budget { breach, .. } => Cow::Owned(budget(breach)),
            Error::AliasError { error, .. } => self.format_message(error),
            Error::SerdeUnknownVariant {
                variant, expected, ..
            } => Cow::Owned(unknown_name(variant, expected)),
            Error::TaggedEnumMismatch { tagged, target, .. } => {
                Cow::Owned(tagged_name(tagged, target))
            }
            Error::SerdeUnknownField {
                field, expected, ..
            } => Cow::Owned(format!(
                "unknown field {}, expected one of {}",
                shown(field),
                expected.join(", ")
            )),
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
            Error::AliasReplayLimitExceeded { .. } => Cow::Owned(too_large(format!(
                "its aliases (*name) expand to more than {MAX_REPLAYED_EVENTS} parser events"
            ))),
            Error::AliasExpansionLimitExceeded {
                max_expansions_per_anchor,
                ..
            } => Cow::Owned(too_large(format!(
                "an anchor (&name) is used more than {max_expansions_per_anchor} times"
            ))),
            Error::AliasReplayStackDepthExceeded { .. } => Cow::Owned(too_large(format!(
                "aliases (*name) nest more than {MAX_DEPTH} deep"
            ))),
            other => match UserMessageFormatter.format_message(other) {
                Cow::Borrowed(text) => plain(text),
                Cow::Owned(text) => Cow::Owned(plain(&text).into_owned()),
            },
        }
    }
}

/// `the YAML is too large or too complex for a scenario: {what}`.
fn too_large(what: String) -> String {
    format!("the YAML is too large or too complex for a scenario: {what}")
}

/// A parser limit, with its number.
fn budget(breach: &BudgetBreach) -> String {
    too_large(match breach {
        BudgetBreach::Nodes { .. } => {
            format!("more than {MAX_VALUES} values (keys, scalars, lists, mappings)")
        }
        BudgetBreach::Events { .. } => format!("more than {MAX_EVENTS} parser events"),
        BudgetBreach::Aliases { .. } => format!("more than {MAX_ALIASES} aliases (*name)"),
        BudgetBreach::Anchors { .. } => format!("more than {MAX_ANCHORS} anchors (&name)"),
        BudgetBreach::Depth { .. } => format!("more than {MAX_DEPTH} levels of nesting"),
        BudgetBreach::Documents { documents } => {
            format!("{documents} documents, and a scenario is one")
        }
        BudgetBreach::ScalarBytes { .. } => format!(
            "more than {} MiB of text in its values",
            MAX_SCALAR_BYTES >> 20
        ),
        BudgetBreach::MergeKeys { .. } => format!("more than {MAX_MERGE_KEYS} merge keys (<<)"),
        BudgetBreach::AliasAnchorRatio { aliases, anchors } => format!(
            "{aliases} aliases (*name) of {anchors} anchor(s) (&name): once there are \
             {ALIASES_BEFORE_RATIO} aliases, at most {MAX_ALIASES_PER_ANCHOR} per anchor"
        ),
        BudgetBreach::SequenceUnbalanced => {
            return "a list or mapping ends here that never began".to_string()
        }
        _ => limits(),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::*;

    fn refused<T: DeserializeOwned + std::fmt::Debug>(yaml: &str) -> String {
        parse_yaml::<T>(yaml).unwrap_err().message
    }

    /// A name serde does not know is told the names it does, under the list's noun: each list
    /// of `CHOICES` is the one serde accepts (a list that drifted would lose its noun).
    #[test]
    fn an_unknown_name_is_told_the_names_there_are() {
        for c in CHOICES {
            let got = match c.of_type {
                "WorkloadKind" => refused::<WorkloadKind>("\"zz\\u0085z\""),
                "Action" => refused::<Action>("\"zz\\u0085z\""),
                "CheckSpec" => refused::<CheckSpec>("\"zz\\u0085z\": {}"),
                "PartitionMode" => refused::<PartitionMode>("\"zz\\u0085z\""),
                "Pick" => refused::<Pick>("\"zz\\u0085z\""),
                "Role" => refused::<Role>("\"zz\\u0085z\""),
                "ReadConsistency" => refused::<ReadConsistency>("\"zz\\u0085z\""),
                "OutcomeFilter" => refused::<OutcomeFilter>("\"zz\\u0085z\""),
                "JvmEvent" => refused::<JvmEvent>("\"zz\\u0085z\""),
                "EtagForm" => refused::<EtagForm>("\"zz\\u0085z\""),
                other => panic!("no test for {other}"),
            };
            let want = format!(
                "`zz\\u{{85}}z` is not a {}; one of: {}",
                c.noun,
                (c.names)().join(", ")
            );
            assert_eq!(got, want);
        }
        // `do:`, one action or a list, and a name of a list no noun is known for.
        let all = crate::faults::kinds::names().join(", ");
        assert_eq!(
            refused::<Actions>("frobnicate"),
            format!("`frobnicate` is not a fault action; one of: {all}")
        );
        assert_eq!(
            refused::<Actions>("[pause, frob]"),
            format!("`frob` is not a fault action; one of: {all}")
        );
        assert_eq!(unknown_name("x", &["a", "b"]), "`x` is not one of: a, b");
        // A long value is cut, with its length.
        let long = "k".repeat(5000);
        assert!(refused::<WorkloadKind>(&long)
            .contains("(cut: the first 80 of 5000 characters) is not a workload kind"));
    }

    /// A YAML tag where a name belongs (`kind: !custom register`) is said as a tag.
    #[test]
    fn a_tag_where_a_name_belongs_is_said_as_a_tag() {
        assert_eq!(
            refused::<WorkloadKind>("!custom register"),
            format!(
                "`!custom` (a YAML tag) is not a workload kind; one of: {} (written plain, without `!`)",
                crate::workloads::names().join(", ")
            )
        );
    }

    /// Each limit is named with its number, and the message is never cut short (an alias's
    /// "defined at" once cut it at "(defined").
    #[test]
    fn limits_are_named_with_their_numbers() {
        let many = vec!["*a"; 300].join(", ");
        let got = refused::<serde_json::Value>(&format!("[&a x, {many}]"));
        assert!(
            got.starts_with("the YAML is too large or too complex for a scenario: ")
                && got.ends_with("once there are 100 aliases, at most 10 per anchor"),
            "{got}"
        );
        let nested = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(
            refused::<serde_json::Value>(&nested),
            "the YAML is too large or too complex for a scenario: more than 64 levels of nesting"
        );
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Two {
            a: Vec<String>,
            b: String,
        }
        assert_eq!(
            refused::<Two>("a: &a [x, y]\nb: *a\n"),
            "expected text (one value)"
        );
        let limits = limits();
        for number in [
            "4 MiB",
            "250000 values",
            "1000000 parser events",
            "64 levels",
        ] {
            assert!(limits.contains(number), "{limits}");
        }
    }
}
