//! Fault steps as a scenario writes them: actions, targets, triggers and their settings.

use super::*;

/// What a fault step does: a fault of the registry (`faults::kinds`), by its name.
pub use crate::faults::kinds::Action;

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PartitionMode {
    /// The targets are cut off from every other node.
    Isolate,
    /// The cluster is split into two random halves (targets ignored).
    Halves,
    /// Every node sees a majority, no two nodes the same one (Jepsen's majorities ring).
    MajorityRing,
    /// Two halves joined by one node that sees both.
    Bridge,
}

/// One action, or a list to pick from at random (for `every:` schedules).
#[derive(Debug, Clone)]
pub struct Actions(pub Vec<Action>);

/// By hand rather than `untagged`, whose refusal names no action: an unknown one is named,
/// with the registry's actions.
impl<'de> Deserialize<'de> for Actions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Actions;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "an action or a list of actions: {}",
                    crate::faults::kinds::names().join(", ")
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Actions, E> {
                Action::named(v)
                    .map(|a| Actions(vec![a]))
                    .ok_or_else(|| E::unknown_variant(v, crate::faults::kinds::names()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Actions, A::Error> {
                let mut list = Vec::new();
                while let Some(action) = seq.next_element::<Action>()? {
                    list.push(action);
                }
                if list.is_empty() {
                    return Err(de::Error::custom("`do:` needs at least one action"));
                }
                Ok(Actions(list))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Pick {
    /// One node of the candidates, chosen with the seed.
    #[default]
    One,
    All,
    /// A majority of the candidates (of the whole cluster when no role is given).
    Majority,
    Minority,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Leader,
    Follower,
}

/// Which nodes a fault hits: a node name, a list of names, or a role with a pick, among
/// every node or among the named ones.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Target {
    Nodes(Vec<String>),
    Select {
        #[serde(skip_serializing_if = "Option::is_none")]
        role: Option<Role>,
        pick: Pick,
        /// Only these nodes are candidates (every node when absent): a step can say "whichever
        /// of om1 and om2 follows" when which one leads depends on the run.
        #[serde(skip_serializing_if = "Option::is_none")]
        among: Option<Vec<String>>,
    },
}

impl Target {
    /// The nodes the step can only land on, when it names them (a list, or `among`).
    pub fn named_nodes(&self) -> Option<&[String]> {
        match self {
            Target::Nodes(list)
            | Target::Select {
                among: Some(list), ..
            } => Some(list),
            Target::Select { among: None, .. } => None,
        }
    }
}

impl Default for Target {
    fn default() -> Self {
        Target::Select {
            role: None,
            pick: Pick::One,
            among: None,
        }
    }
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TargetVisitor;
        impl<'de> Visitor<'de> for TargetVisitor {
            type Value = Target;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a node name, a list of node names, or { role: leader|follower, pick: one|all|majority|minority, among: [nodes] }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Target, E> {
                Ok(Target::Nodes(vec![v.to_string()]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Target, A::Error> {
                let mut nodes = Vec::new();
                while let Some(node) = seq.next_element::<String>()? {
                    nodes.push(node);
                }
                if nodes.is_empty() {
                    return Err(de::Error::custom("an empty list of target nodes"));
                }
                Ok(Target::Nodes(nodes))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Target, A::Error> {
                let mut role = None;
                let mut pick = None;
                let mut among = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "role" => role = Some(map.next_value::<Role>()?),
                        "pick" => pick = Some(map.next_value::<Pick>()?),
                        "among" => {
                            let nodes = map.next_value::<Vec<String>>()?;
                            if nodes.is_empty() {
                                return Err(de::Error::custom(
                                    "`among` names no node: leave it out to pick among every node",
                                ));
                            }
                            among = Some(nodes);
                        }
                        other => {
                            return Err(de::Error::unknown_field(other, &["role", "pick", "among"]))
                        }
                    }
                }
                Ok(Target::Select {
                    role,
                    pick: pick.unwrap_or_default(),
                    among,
                })
            }
        }
        deserializer.deserialize_any(TargetVisitor)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AfterOps {
    pub ops: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogTrigger {
    /// The node whose log is watched; any node when absent.
    pub node: Option<Spanned<String>>,
    pub regex: Spanned<String>,
}

/// A JVM fault's rule reached its place on a node (`{ step: 0, event: held }`): the first
/// such `CHAOS-JVM` line of chaos's Byteman helper, so a scenario need not spell its format.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JvmTrigger {
    /// The earlier step whose rule fired.
    pub step: Spanned<usize>,
    /// Which event counts (any firing when left out: delayed, threw, held, fired).
    pub event: Option<super::JvmEvent>,
    /// The node whose JVM it fired in; any node when absent.
    pub node: Option<Spanned<String>>,
}

/// One of `log:` (a line matching a regex) and `jvm:` (a JVM fault's rule fired).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnSpec {
    pub log: Option<LogTrigger>,
    pub jvm: Option<JvmTrigger>,
}

/// A probe that fires when a node takes a role (`{ node: etcd2, role: leader }`), or falls more
/// than `behind` entries behind the highest applied index (`{ node: om3, behind: 500 }`), or when
/// any node does if no node is named. One of `role` and `behind`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhenSpec {
    pub node: Option<Spanned<String>>,
    pub role: Option<Role>,
    /// Applied-index lag (systems with the probe: ozone).
    pub behind: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThenSpec {
    #[serde(rename = "do")]
    pub action: Action,
    pub after: DurRange,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultStep {
    pub at: Option<Dur>,
    pub after: Option<AfterOps>,
    pub on: Option<OnSpec>,
    pub when: Option<WhenSpec>,
    pub every: Option<DurRange>,
    /// An `on:` or `when:` trigger watches only once this earlier step is over (applied, and
    /// its `for:` undo and `then:` done): a log line or state before that does not count.
    #[serde(rename = "armed-after")]
    pub armed_after: Option<Spanned<usize>>,
    #[serde(rename = "do")]
    pub actions: Actions,
    pub mode: Option<PartitionMode>,
    /// partition: exactly who drops packets from whom (node -> nodes), instead of drawing the
    /// sides from `mode:`; how a replayed or shrunk schedule repeats a random partition.
    pub grudge: Option<Spanned<BTreeMap<String, Vec<String>>>>,
    #[serde(default)]
    pub target: Option<Spanned<Target>>,
    #[serde(rename = "for")]
    pub duration: Option<DurRange>,
    pub then: Option<ThenSpec>,
    /// lose-reply: which requests (all when absent).
    #[serde(rename = "match")]
    pub matching: Option<MatchSpec>,
    /// lose-reply: how many replies to lose (1 when absent).
    pub count: Option<u32>,
    /// delay-replies, slow-fsync, slow-writes: how long each reply, fsync or write waits.
    pub delay: Option<Dur>,
    /// slow-fsync, slow-writes: random extra wait up to this.
    pub jitter: Option<Dur>,
    /// slow-fsync, fail-fsync: only files whose path matches this regex.
    pub paths: Option<Spanned<String>>,
    /// fail-fsync: the error fsync returns (EIO by default).
    pub errno: Option<Spanned<String>>,
    /// fail-fsync: fail this fraction of fsyncs instead of a count.
    pub fraction: Option<Spanned<f64>>,
    /// crash: drop what was written but not fsynced before the kill.
    #[serde(rename = "lose-unsynced")]
    pub lose_unsynced: Option<bool>,
    /// close-container: the container id, or `open` for every open container.
    pub container: Option<ContainerRef>,
    /// transfer-leader: whose admin request moves leadership (`service`, the default, or `raft`).
    pub via: Option<TransferVia>,
    /// clock-skew: how far the node's wall clock runs from true time (`+70s`, `-30s`, or a
    /// range drawn with the seed, `+60s..+90s`).
    pub offset: Option<OffsetRange>,
    /// The JVM faults (jvm-delay, jvm-throw, jvm-hold, jvm-trace, jvm-rule): where in the
    /// node's JVM the rule acts, or its text.
    pub jvm: Option<Spanned<JvmSpec>>,
    /// Without it, a step that never fired or never applied makes the run unknown (exit 2):
    /// a fault that did not happen tested nothing.
    #[serde(default)]
    pub optional: bool,
}

/// Where a JVM fault's rule acts (Byteman's CLASS, METHOD, AT and IF), what it does beyond its
/// kind (the exception thrown, the values traced), or, for jvm-rule, the rule's whole text.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JvmSpec {
    /// A fully qualified class (`^org.x.Y` also matches subclasses; `interface org.x.Y` every
    /// implementation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// `entry` (the default), `exit`, `line N`, or Byteman's own location (`AFTER INVOKE x`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Byteman's condition: the rule acts only when it holds (`$1 > 100`).
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// jvm-throw: the exception's class; it must be unchecked or declared by the method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throw: Option<String>,
    /// jvm-throw: the exception's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// jvm-trace: up to 4 expressions recorded with each call (`$1`, `$0.field`, `$!` at exit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// jvm-rule: the rule text (RULE ... ENDRULE), loaded as it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// jvm-unload: the earlier step whose rule goes (its held threads go on); without it every
    /// rule on the node goes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
}

/// Whose admin request transfer-leader sends. The service's own (Ozone: the OM's
/// TransferLeadership, as `ozone admin om transfer` sends it) is what an operator runs; the
/// consensus library's (Ozone: Ratis's transferLeadership, as `ozone ratis election transfer`
/// sends it) bypasses the service. With linearizable reads on, Ozone answers its own request as a
/// read on the Ratis apply thread, which can deadlock (docs/findings/ozone-transfer-leadership-
/// deadlock.md); a scenario about something else then moves leadership with `raft`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TransferVia {
    #[default]
    Service,
    Raft,
}

/// Which storage containers close-container closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ContainerRef {
    /// One container, by id.
    Id(u64),
    /// Every container open when the step fires (`container: open`): a write in flight is
    /// then in one of them whichever the datanodes chose.
    #[serde(serialize_with = "serialize_open")]
    Open,
}

fn serialize_open<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("open")
}

impl<'de> Deserialize<'de> for ContainerRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ContainerRef;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a container id or `open`")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ContainerRef, E> {
                Ok(ContainerRef::Id(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ContainerRef, E> {
                u64::try_from(v)
                    .map(ContainerRef::Id)
                    .map_err(|_| E::custom(format!("`{v}` is not a container id")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ContainerRef, E> {
                match v {
                    "open" => Ok(ContainerRef::Open),
                    other => other.parse().map(ContainerRef::Id).map_err(|_| {
                        E::custom(format!(
                            "{}: expected a container id or `open`",
                            chaos_core::shown::shown(other)
                        ))
                    }),
                }
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// HTTP requests a proxy fault applies to.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchSpec {
    pub method: Option<String>,
    /// A regex on the request path.
    pub path: Option<Spanned<String>>,
    /// Header name and a regex on its value.
    pub header: Option<Spanned<IndexMap<String, String>>>,
}
