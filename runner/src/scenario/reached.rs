//! The `reached:` section: a bug's preconditions as named predicates, each observable from what
//! a run records (faults.jsonl, logs/, history.jsonl, converge.json) or probes while it plays
//! (observed.jsonl). A run that did not reach them has not tested the bug (exit 2).
//!
//! ```yaml
//! reached:
//!   every-om-restarted:   { step: 3, ready: true }
//!   om3-installs:         { log: { node: om3, regex: "Install Checkpoint", after-step: 2 } }
//!   om3-behind:           { probe: { node: om3, behind: 300 } }
//!   om3-apply-held:       { jvm: { step: 1, event: held, node: om3 } }
//!   answered-then-resent: { resent: { first: { outcome: ok, answered-before: 3 },
//!                                     again: { answered-after: 3 }, at-least: 10 } }
//! ```
//!
//! "After step N" means once step N is over (applied, undone, its `then:` done, and the nodes
//! a restart or start brought back answering again), as `armed-after:` means; "before step N"
//! means before it was first applied.

use super::*;

/// One named precondition: exactly one of the kinds.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Precondition {
    /// Fault step N applied (and, with `undone`, undone; with `ready`, its nodes answering
    /// again afterwards).
    pub step: Option<Spanned<usize>>,
    #[serde(default)]
    pub undone: bool,
    #[serde(default)]
    pub ready: bool,
    /// A line of a node's log (optionally only after step N).
    pub log: Option<LogPredicate>,
    /// A probed state, watched while the run plays.
    pub probe: Option<ProbePredicate>,
    /// At least N operations of the history that match (`at-least`, 1 by default).
    pub history: Option<OpFilter>,
    /// At least N calls sent more than once (same client and call id) whose answers match.
    pub resent: Option<ResentPredicate>,
    /// The converge probe answered: every node gave its applied index after the run.
    pub converge: Option<NoOptions>,
    /// The build on a node defines a configuration key (Ozone: in its jars' *-default.xml).
    pub config: Option<ConfigPredicate>,
    /// A JVM fault's rule fired: a thread reached its method (the helper's lines in the log).
    pub jvm: Option<JvmPredicate>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JvmPredicate {
    /// The JVM fault step whose rule fired.
    pub step: Spanned<usize>,
    /// Which event of the rule counts (any firing when left out: delayed, threw, held, fired).
    pub event: Option<JvmEvent>,
    /// A name, or `{ of-step: N }`: any node fault step N acted on.
    pub node: Option<Spanned<NodeRef>>,
    /// How many such events (1 when left out).
    #[serde(default = "one")]
    pub at_least: u64,
}

/// What chaos's Byteman helper says of a firing (`CHAOS-JVM {"event": ...}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JvmEvent {
    /// jvm-delay made the thread wait.
    Delayed,
    /// jvm-throw threw.
    Threw,
    /// jvm-hold stopped the thread.
    Held,
    /// A held thread went on: its rule was unloaded.
    Released,
    /// A held thread went on after ten minutes with its rule still loaded (a harness gone).
    LetGo,
    /// jvm-trace recorded a call.
    Fired,
}

impl JvmEvent {
    /// Events that are a thread reaching the rule's place (not the end of a hold).
    pub fn is_firing(self) -> bool {
        matches!(self, Self::Delayed | Self::Threw | Self::Held | Self::Fired)
    }

    /// Whether this event counts for a predicate or trigger that asks for `wanted` (any
    /// firing when None).
    pub fn counts_as(self, wanted: Option<JvmEvent>) -> bool {
        wanted.map_or(self.is_firing(), |w| w == self)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LogPredicate {
    /// A name, or `{ of-step: N }`: any node fault step N acted on.
    pub node: Option<Spanned<NodeRef>>,
    pub regex: Spanned<String>,
    pub after_step: Option<Spanned<usize>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ProbePredicate {
    /// A name, or `{ of-step: N }`: any node fault step N acted on, once it has.
    pub node: Option<Spanned<NodeRef>>,
    /// The node (or some node) holds this role.
    pub role: Option<Role>,
    /// The node (or some node) is more than this many entries behind the highest applied index.
    pub behind: Option<u64>,
    /// A metric of the node's /prom page: `name` or `name{label="v"}`, past `above`.
    pub metric: Option<Spanned<String>>,
    pub above: Option<f64>,
    pub after_step: Option<Spanned<usize>>,
}

/// Which operations count: their kind, outcome, error text and times relative to steps.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OpFilter {
    /// Operation kinds (`rename`, `read`, `recover-lease`); any when left out.
    #[serde(default)]
    pub f: Option<OneOrMany>,
    /// Written empty (`outcome:`), it is refused rather than read as "any outcome".
    #[serde(default, deserialize_with = "outcome_given")]
    pub outcome: Option<OutcomeFilter>,
    /// A regex the answer's error text (or value) must match.
    pub error: Option<Spanned<String>>,
    /// The node the operation's process talked to (`history:`: which node answered it, when
    /// the client sends it there alone, as Ozone's follower reads do): a name, or
    /// `{ of-step: N }`, the node or nodes fault step N acted on.
    pub node: Option<Spanned<NodeRef>>,
    pub invoked_after: Option<Spanned<usize>>,
    pub invoked_before: Option<Spanned<usize>>,
    pub answered_after: Option<Spanned<usize>>,
    /// Answered once step N had applied (a restart: by the restarted nodes, even before the
    /// harness saw them all answering again).
    pub answered_after_applied: Option<Spanned<usize>>,
    pub answered_before: Option<Spanned<usize>>,
    /// Invoked while step N was in force (from its apply to its undo, or to its end).
    pub during: Option<Spanned<usize>>,
    /// `history:` only: how many operations must match (1 when left out).
    pub at_least: Option<Spanned<u64>>,
}

/// A node a filter names: by its name, or as the node or nodes fault step N acted on
/// (`{ of-step: N }`: the targets of its apply events in faults.jsonl, known once it applied,
/// so a step that picks its node when it fires can be named).
#[derive(Debug, Clone)]
pub enum NodeRef {
    Named(String),
    OfStep(Spanned<usize>),
}

/// `node: { of-step: N }` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct OfStep {
    of_step: Spanned<usize>,
}

/// By hand rather than `untagged`, which would lose the step's position and name no key.
impl<'de> Deserialize<'de> for NodeRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NodeRef;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a node's name, or { of-step: N } (the node or nodes fault step N acted on)",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<NodeRef, E> {
                Ok(NodeRef::Named(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<NodeRef, A::Error> {
                let of = OfStep::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(NodeRef::OfStep(of.of_step))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ResentPredicate {
    /// The call's first definite answer.
    #[serde(default)]
    pub first: OpFilter,
    /// A later send of the same call.
    #[serde(default)]
    pub again: OpFilter,
    #[serde(default = "one")]
    pub at_least: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ConfigPredicate {
    pub node: Spanned<String>,
    pub key: String,
    /// What the run says when the build lacks the key (for example which build has it).
    #[serde(default)]
    pub if_missing: Option<String>,
}

/// `outcome:` as written: an empty one (null) is an error, not "any".
fn outcome_given<'de, D: Deserializer<'de>>(d: D) -> Result<Option<OutcomeFilter>, D::Error> {
    match Option::<OutcomeFilter>::deserialize(d)? {
        Some(o) => Ok(Some(o)),
        None => Err(de::Error::custom(
            "`outcome:` is empty: give ok, fail, info or definite, or leave it out to count every outcome",
        )),
    }
}

/// `reached:` as written: an empty section (`reached: {}`) states no precondition, so it
/// would confirm any run; it is an error.
pub(super) fn some_preconditions<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<IndexMap<String, Spanned<Precondition>>, D::Error> {
    let map = IndexMap::<String, Spanned<Precondition>>::deserialize(d)?;
    if map.is_empty() {
        return Err(de::Error::custom(
            "`reached: {}` names no precondition, so it would vouch for any run: name one (step, log, probe, history, resent, converge, config, jvm), or leave `reached:` out",
        ));
    }
    Ok(map)
}

fn one() -> u64 {
    1
}

/// `f: rename` or `f: [rename, read]`.
#[derive(Debug, Clone)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// By hand rather than `untagged`: serde's untagged error ("data did not match any variant of
/// untagged enum OneOrMany") names a Rust type, not what the author should write.
impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an operation kind (like read) or a list of them ([read, write])")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany::One(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrMany, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    names.push(name);
                }
                Ok(OneOrMany::Many(names))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl OneOrMany {
    pub fn names(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => vec![s.as_str()],
            OneOrMany::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutcomeFilter {
    Ok,
    Fail,
    Info,
    /// ok or fail: the system answered.
    Definite,
}

/// What kind of predicate a precondition is, for messages and result.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PredicateKind {
    Step,
    Log,
    Probe,
    History,
    Resent,
    Converge,
    Config,
    Jvm,
}

impl Precondition {
    /// The kinds given (exactly one is valid).
    pub fn kinds(&self) -> Vec<PredicateKind> {
        let mut kinds = Vec::new();
        let given = [
            (self.step.is_some(), PredicateKind::Step),
            (self.log.is_some(), PredicateKind::Log),
            (self.probe.is_some(), PredicateKind::Probe),
            (self.history.is_some(), PredicateKind::History),
            (self.resent.is_some(), PredicateKind::Resent),
            (self.converge.is_some(), PredicateKind::Converge),
            (self.config.is_some(), PredicateKind::Config),
            (self.jvm.is_some(), PredicateKind::Jvm),
        ];
        for (is, kind) in given {
            if is {
                kinds.push(kind);
            }
        }
        kinds
    }

    /// Whether the harness must watch for it while the run plays (probes; the build's keys are
    /// asked of the image before the cluster starts).
    pub fn is_observed_live(&self) -> bool {
        self.probe.is_some()
    }

    /// Every step index the predicate names, with where it is written.
    pub fn steps_named(&self) -> Vec<&Spanned<usize>> {
        let mut out: Vec<&Spanned<usize>> = Vec::new();
        out.extend(&self.step);
        if let Some(log) = &self.log {
            out.extend(&log.after_step);
        }
        if let Some(probe) = &self.probe {
            out.extend(&probe.after_step);
        }
        if let Some(jvm) = &self.jvm {
            out.push(&jvm.step);
        }
        let mut filters: Vec<&OpFilter> = Vec::new();
        if let Some(h) = &self.history {
            filters.push(h);
        }
        if let Some(r) = &self.resent {
            filters.push(&r.first);
            filters.push(&r.again);
        }
        for f in filters {
            for s in [
                &f.invoked_after,
                &f.invoked_before,
                &f.answered_after,
                &f.answered_after_applied,
                &f.answered_before,
                &f.during,
            ]
            .into_iter()
            .flatten()
            {
                out.push(s);
            }
        }
        out
    }

    /// The nodes it names (`log:`, `probe:`, `jvm:`, and the operation filters of `history:`
    /// and `resent:`), with their key paths below the predicate.
    pub fn node_refs(&self) -> Vec<(&'static str, &Spanned<NodeRef>)> {
        let mut out = Vec::new();
        if let Some(n) = self.log.as_ref().and_then(|l| l.node.as_ref()) {
            out.push(("log.node", n));
        }
        if let Some(n) = self.probe.as_ref().and_then(|p| p.node.as_ref()) {
            out.push(("probe.node", n));
        }
        if let Some(n) = self.jvm.as_ref().and_then(|j| j.node.as_ref()) {
            out.push(("jvm.node", n));
        }
        if let Some(n) = self.history.as_ref().and_then(|h| h.node.as_ref()) {
            out.push(("history.node", n));
        }
        if let Some(r) = &self.resent {
            out.extend(r.first.node.as_ref().map(|n| ("resent.first.node", n)));
            out.extend(r.again.node.as_ref().map(|n| ("resent.again.node", n)));
        }
        out
    }

    /// The regexes the predicate carries, with their key paths below the predicate.
    pub fn regexes(&self) -> Vec<(&'static str, &Spanned<String>)> {
        let mut out = Vec::new();
        if let Some(log) = &self.log {
            out.push(("log.regex", &log.regex));
        }
        if let Some(e) = self.history.as_ref().and_then(|h| h.error.as_ref()) {
            out.push(("history.error", e));
        }
        if let Some(r) = &self.resent {
            if let Some(e) = &r.first.error {
                out.push(("resent.first.error", e));
            }
            if let Some(e) = &r.again.error {
                out.push(("resent.again.error", e));
            }
        }
        out
    }
}
