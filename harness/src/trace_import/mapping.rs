//! The mapping file: what each action of a model's trace is on a real cluster, and what the
//! cluster shows when it took it (docs/traces.md). Parsed strictly, as a scenario is: an unknown
//! key or a value of the wrong type is an error at its line and column, with its key path.

use std::fmt;
use std::path::Path;

use indexmap::IndexMap;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::yaml::Fragment;
use crate::scenario::{self, ScenarioError};

/// A mapping as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    /// A scenario file (relative to the mapping's folder): its system, cluster, seed, workload,
    /// checks and final phase are kept; its `faults:` and `reached:` are replaced by the
    /// trace's.
    pub base: Spanned<String>,
    /// The imported scenario's name (default: the base's, with `-trace`).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    #[serde(default)]
    pub description: Option<String>,
    /// The model's node ids, each with the cluster's node it stands for (`n1: etcd1`).
    #[serde(default)]
    pub nodes: IndexMap<String, Spanned<String>>,
    /// Each action the trace can take, by its name: the cases, tried in order.
    pub actions: Spanned<IndexMap<String, Spanned<Vec<Spanned<Case>>>>>,
}

/// One case of an action: which steps it covers, what it is on the cluster, what shows it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The action's parameters this case covers, each with a pattern its value must match: a
    /// value (compared with the value's text: `1`, `om2`) or a regex between slashes (`"/.*/"`, quoted: `[` and `{` end a plain YAML value).
    /// A step whose parameters are not all named here is not covered by this case.
    #[serde(default)]
    pub params: IndexMap<String, Spanned<Pattern>>,
    /// The case covers a step only once an earlier step of the trace took this action
    /// (`after: restart`: the `apply` that comes after a restart).
    #[serde(default)]
    pub after: Option<Spanned<String>>,
    /// A fault step without its trigger (any step of docs/scenarios.md), or with one where the
    /// mapping says when it fires.
    #[serde(default)]
    pub fault: Option<Spanned<Fragment>>,
    /// Several fault steps: the first is triggered as `fault:` is, the others need their own.
    #[serde(default)]
    pub faults: Option<Spanned<Vec<Spanned<Fragment>>>>,
    /// A call of the workload: nothing to inject, the workload sends it (a retry is the same
    /// call again, `{ call: "{call}", again: true }`); its answer is observed in the history.
    #[serde(default)]
    pub workload: Option<Spanned<WorkloadCall>>,
    /// What the cluster shows when it took the step: a `reached:` predicate (`{ log: {...} }`,
    /// `{ jvm: {...} }`, `{ history: {...} }`, ...), with the trace's parameters put in. A
    /// case with a fault step may leave it out: `{ step: "{fault}" }`, the step applied.
    #[serde(default)]
    pub observed: Option<Spanned<Fragment>>,
}

impl Case {
    /// The case's fault steps, in order.
    pub fn fault_steps(&self) -> Vec<&Spanned<Fragment>> {
        let many = self.faults.iter().flat_map(|f| f.value.iter());
        self.fault.iter().chain(many).collect()
    }
}

/// A workload call, named by its client's call id.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadCall {
    /// The call (a parameter of the trace, `"{call}"`): the same id again is a retry.
    pub call: String,
    /// This step sends the call again (same client, same call id).
    #[serde(default)]
    pub again: bool,
}

/// A parameter's pattern: its value's text, or a regex.
#[derive(Debug, Clone)]
pub enum Pattern {
    Text(String),
    Regex(regex::Regex),
}

impl Pattern {
    pub fn matches(&self, text: &str) -> bool {
        match self {
            Pattern::Text(expected) => expected == text,
            Pattern::Regex(re) => re.is_match(text),
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Text(text) => f.write_str(text),
            Pattern::Regex(re) => write!(f, "/{}/", re.as_str()),
        }
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Pattern;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a parameter's value (`1`, `om2`) or a regex between slashes (`/.*/`)")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Pattern, E> {
                Ok(Pattern::Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Pattern, E> {
                Ok(Pattern::Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Pattern, E> {
                Ok(Pattern::Text(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Pattern, E> {
                match v.strip_prefix('/').and_then(|r| r.strip_suffix('/')) {
                    Some(re) if v.len() >= 2 => regex::Regex::new(&format!("^(?:{re})$"))
                        .map(Pattern::Regex)
                        .map_err(|e| E::custom(format!("the regex does not compile: {e}"))),
                    _ => Ok(Pattern::Text(v.to_string())),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Reads and parses the mapping in `path` (not yet checked against a trace or a cluster).
pub fn read(path: &Path) -> Result<Mapping, ScenarioError> {
    let text = scenario::read_file(path)?;
    scenario::wording::parse_yaml(&text).map_err(|e| e.in_file(path))
}
