//! Scenarios: the YAML a user writes, parsed strictly (unknown keys are errors) and validated
//! against the compose file, the system adapter and the checker before any container starts.

pub mod plan;
pub mod units;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indexmap::IndexMap;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_saphyr::{Location, Spanned};

use crate::cluster::compose::ComposeFile;
use crate::systems;
pub use units::{Dur, DurRange, OffsetRange, Rate};

/// A scenario as written. Field names are the YAML keys.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub system: Spanned<String>,
    pub cluster: ClusterSpec,
    #[serde(default)]
    pub seed: Option<u64>,
    pub workload: WorkloadSpec,
    #[serde(default)]
    pub faults: Vec<Spanned<FaultStep>>,
    #[serde(default)]
    pub checks: Vec<Spanned<CheckSpec>>,
    #[serde(default, rename = "final")]
    pub final_phase: FinalSpec,
    /// Object stores (`system: s3`): credentials, bucket, region, port.
    #[serde(default)]
    pub s3: Option<S3Spec>,
}

/// How clients reach an S3 store. The keys never leave the harness: the run folder's copy of
/// the scenario has them replaced by `[redacted]`, node logs are scrubbed of them.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct S3Spec {
    pub access_key: String,
    pub secret_key: String,
    /// Created before the workload (an existing bucket is fine).
    #[serde(default = "default_bucket")]
    pub bucket: String,
    #[serde(default = "default_region")]
    pub region: String,
    /// The container port of the S3 API (default: the node's first published port).
    #[serde(default)]
    pub port: Option<u16>,
    /// How a PUT's `If-Match` carries the ETag: `quoted` (RFC 7232, the default) or
    /// `unquoted` (Ceph RGW 16.2 matches only the bare ETag it stores).
    #[serde(default)]
    pub if_match_etag: EtagForm,
}

/// `s3.if-match-etag`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EtagForm {
    #[default]
    Quoted,
    Unquoted,
}

impl fmt::Debug for S3Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Spec")
            .field("access_key", &"[redacted]")
            .field("secret_key", &"[redacted]")
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("port", &self.port)
            .field("if_match_etag", &self.if_match_etag)
            .finish()
    }
}

fn default_bucket() -> String {
    "chaos".into()
}
fn default_region() -> String {
    "us-east-1".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    /// Found beside the scenario or in one of its parent folders.
    #[serde(default = "default_compose")]
    pub compose: Spanned<String>,
    pub profile: Spanned<String>,
    /// Extra environment for every node (overrides the compose file's).
    #[serde(default)]
    pub environment: IndexMap<String, String>,
    /// Clients reach every node through the harness's proxy (implied by proxy faults).
    #[serde(default)]
    pub proxy: bool,
}

fn default_compose() -> Spanned<String> {
    Spanned::new(
        "docker-compose.yml".to_string(),
        Location::UNKNOWN,
        Location::UNKNOWN,
    )
}

/// Every value of the small enums a scenario names, for the reference's drift test.
pub const WORKLOAD_KINDS: &[WorkloadKind] = &[
    WorkloadKind::Register,
    WorkloadKind::Set,
    WorkloadKind::Create,
    WorkloadKind::S3Object,
    WorkloadKind::Fencing,
    WorkloadKind::Lease,
    WorkloadKind::Stream,
];
pub const PARTITION_MODES: &[PartitionMode] = &[
    PartitionMode::Isolate,
    PartitionMode::Halves,
    PartitionMode::MajorityRing,
    PartitionMode::Bridge,
];
pub const PICKS: &[Pick] = &[Pick::One, Pick::All, Pick::Majority, Pick::Minority];
pub const ROLES: &[Role] = &[Role::Leader, Role::Follower];
pub const CHECK_NAMES: &[&str] = &[
    "linearizable",
    "durable",
    "retry-consistent",
    "converge",
    "fencing",
    "conditional-writes",
    "stays-up",
];

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// read / write / cas on a few keys, unique written values.
    Register,
    /// add unique values to a few sets, read them whole (final reads feed the durable check).
    Set,
    /// create fresh keys if absent (cas [null, v]), one request each, resent when the answer is
    /// lost (`retries`); final reads read every created key.
    Create,
    /// get / put / delete / put-if-none-match / put-if-match on a few S3 objects, unique bodies
    /// (the `s3-object` model).
    S3Object,
    /// chaos-s3's fencing protocol over conditional writes: rounds of takeovers raced by
    /// writers that keep uploading (checked by `fencing`).
    Fencing,
    /// hsync'd files and lease recovery (Ozone, FSO bucket): `lease.files` files start at
    /// `rate`; each file's writer creates and hsyncs it, another process calls recoverLease on
    /// it `lease.recover-after` later, and the writer closes it `lease.close-after` the hsync
    /// (see [`LeaseSpec`]). The workload lasts `duration`, and longer if a file is not closed
    /// yet; final reads look every file up.
    Lease,
    /// Fresh keys written with data through a system's streaming client, run in a node's
    /// container (Ozone: `ozone sh key put --stream`), `stream.length` bytes each (`put`, a
    /// write for `durable`); final reads read every key back whole and compare its bytes.
    Stream,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ReadConsistency {
    /// Reads go through the consensus protocol (etcd: quorum reads).
    #[default]
    Linearizable,
    /// Reads are served from the node's local state (etcd: serializable reads). Known to be stale.
    Serializable,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub kind: Spanned<WorkloadKind>,
    #[serde(default = "default_keys")]
    pub keys: u32,
    #[serde(default = "default_processes")]
    pub processes: u32,
    pub rate: Rate,
    pub duration: Dur,
    #[serde(default = "default_timeout")]
    pub timeout: Dur,
    #[serde(default)]
    pub read: ReadConsistency,
    /// Nodes the processes talk to (round robin); every node of the cluster by default.
    #[serde(default)]
    pub nodes: Option<Spanned<Vec<String>>>,
    /// How often a client resends a request whose answer never came, as retrying client
    /// libraries do (0: never; the operation is then recorded as info).
    #[serde(default)]
    pub retries: u32,
    /// How long a client waits before each such resend (0: at once). Lets a scenario change
    /// the cluster between a lost answer and its resend (restart every OM, say).
    #[serde(default = "no_wait", rename = "resend-after")]
    pub resend_after: Dur,
    /// create (ozone): send every call answered OK once more, this long after its answer, the
    /// very same call (same client and call id), recorded as `resend`: a correct system answers
    /// it as it answered the first (`retry-consistent`).
    #[serde(default, rename = "duplicate-after")]
    pub duplicate_after: Option<Dur>,
    /// s3-object: relative weights of the operations (default get 4, put 2, delete 1,
    /// put-if-none-match 2, put-if-match 2; a weight left out is 0).
    #[serde(default)]
    pub mix: Option<Spanned<S3Mix>>,
    /// Every process starts its operations at the same instants (bursts of `processes`
    /// concurrent operations) instead of spreading them over the interval: races.
    #[serde(default)]
    pub burst: bool,
    /// fencing: the shape of each round (rounds start at `rate` until `duration`).
    #[serde(default)]
    pub fencing: Option<Spanned<FencingSpec>>,
    /// lease: the life of each file.
    #[serde(default)]
    pub lease: Option<Spanned<LeaseSpec>>,
    /// stream: what each put writes.
    #[serde(default)]
    pub stream: Option<Spanned<StreamSpec>>,
}

/// What each put of the stream workload writes.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct StreamSpec {
    /// Bytes per key (a pattern made of the key's name, so a read can tell whole from short
    /// or corrupt).
    #[serde(default = "default_stream_length")]
    pub length: u64,
}

impl Default for StreamSpec {
    fn default() -> Self {
        StreamSpec {
            length: default_stream_length(),
        }
    }
}

fn default_stream_length() -> u64 {
    8 << 20
}

/// The life of one file of the lease workload, from its hsync.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LeaseSpec {
    /// How many files (started at the workload's rate).
    #[serde(default = "default_lease_files")]
    pub files: u32,
    /// Bytes the writer hsyncs (the OM records the length it is told: no datanode I/O).
    #[serde(default = "default_lease_length")]
    pub length: u64,
    /// When another client calls recoverLease (inside the OM's soft limit, 60 s by default, it
    /// must be refused).
    #[serde(default = "default_recover_after")]
    pub recover_after: Dur,
    /// When the writer closes the file, at twice `length`.
    #[serde(default = "default_close_after")]
    pub close_after: Dur,
}

impl Default for LeaseSpec {
    fn default() -> Self {
        LeaseSpec {
            files: default_lease_files(),
            length: default_lease_length(),
            recover_after: default_recover_after(),
            close_after: default_close_after(),
        }
    }
}

fn no_wait() -> Dur {
    Dur(Duration::ZERO)
}
fn default_lease_files() -> u32 {
    1
}
fn default_lease_length() -> u64 {
    1024
}
fn default_recover_after() -> Dur {
    Dur(Duration::from_secs(10))
}
fn default_close_after() -> Dur {
    Dur(Duration::from_secs(90))
}

/// Weights of the s3-object operations.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct S3Mix {
    #[serde(default)]
    pub get: u32,
    #[serde(default)]
    pub put: u32,
    #[serde(default)]
    pub delete: u32,
    #[serde(default)]
    pub put_if_none_match: u32,
    #[serde(default)]
    pub put_if_match: u32,
}

impl S3Mix {
    pub const DEFAULT: S3Mix = S3Mix {
        get: 4,
        put: 2,
        delete: 1,
        put_if_none_match: 2,
        put_if_match: 2,
    };
    pub fn total(&self) -> u32 {
        self.get + self.put + self.delete + self.put_if_none_match + self.put_if_match
    }
}

/// One round of the fencing workload (chaos-s3's `FencingConfig`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FencingSpec {
    /// Terms per round (a takeover each).
    #[serde(default = "default_terms")]
    pub terms: u64,
    /// Writers racing for each new term.
    #[serde(default = "default_contenders")]
    pub contenders: usize,
    /// Uploads of the current writers concurrent with the next takeover.
    #[serde(default = "default_overlap")]
    pub overlap_uploads: usize,
    /// Uploads the old writers still try after the takeover completed.
    #[serde(default = "default_zombie")]
    pub zombie_uploads: usize,
    /// Uploads by each new writer after its takeover.
    #[serde(default = "default_uploads")]
    pub uploads: usize,
    /// If set, one old writer per takeover writes its data object and then stalls this long
    /// (a long GC pause) before its conditional fence advance.
    #[serde(default)]
    pub stall: Option<Dur>,
}

impl Default for FencingSpec {
    fn default() -> Self {
        FencingSpec {
            terms: default_terms(),
            contenders: default_contenders(),
            overlap_uploads: default_overlap(),
            zombie_uploads: default_zombie(),
            uploads: default_uploads(),
            stall: None,
        }
    }
}

fn default_terms() -> u64 {
    3
}
fn default_contenders() -> usize {
    2
}
fn default_overlap() -> usize {
    3
}
fn default_zombie() -> usize {
    2
}
fn default_uploads() -> usize {
    5
}

fn default_keys() -> u32 {
    5
}
fn default_processes() -> u32 {
    6
}
fn default_timeout() -> Dur {
    Dur(std::time::Duration::from_secs(2))
}

/// What a fault step does. Each action that breaks something has an undo, applied after `for:`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Pause,
    Unpause,
    Kill,
    Stop,
    Start,
    Restart,
    Partition,
    Heal,
    /// Proxy: forward matching requests, drop their replies and close the connection.
    LoseReply,
    /// Proxy: hold every reply for `delay`.
    DelayReplies,
    /// Proxy: reset every open connection (clients see ECONNRESET).
    ResetConnections,
    /// Proxy: remove every proxy fault.
    ClearProxy,
    /// chaosfs: every fsync waits `delay` (± `jitter`), optionally only for `paths`.
    SlowFsync,
    /// chaosfs: the next `count` fsyncs (or a `fraction` of them) fail with `errno` (EIO).
    FailFsync,
    /// chaosfs: writes wait `delay`.
    SlowWrites,
    /// Drop un-fsynced data (`lose-unsynced: true`), kill the node, start it again.
    Crash,
    /// chaosfs: remove every filesystem fault.
    ClearFs,
    /// System admin: make the target the leader (Ozone: `ozone admin om transfer`).
    TransferLeader,
    /// System admin: the targets take a snapshot of their replicated state now.
    TakeSnapshot,
    /// System admin: close a storage container (`container:`; Ozone: `ozone admin container close`).
    CloseContainer,
    /// System admin: prepare the replicated service for an upgrade (Ozone: `ozone admin om prepare`).
    Prepare,
    /// libfaketime: the node's wall clock runs `offset` away from true time.
    ClockSkew,
    /// libfaketime: the node's wall clock is true time again.
    RestoreClock,
}

impl Action {
    pub const ALL: &'static [Action] = &[
        Action::Pause,
        Action::Unpause,
        Action::Kill,
        Action::Stop,
        Action::Start,
        Action::Restart,
        Action::Partition,
        Action::Heal,
        Action::LoseReply,
        Action::DelayReplies,
        Action::ResetConnections,
        Action::ClearProxy,
        Action::SlowFsync,
        Action::FailFsync,
        Action::SlowWrites,
        Action::Crash,
        Action::ClearFs,
        Action::TransferLeader,
        Action::TakeSnapshot,
        Action::CloseContainer,
        Action::Prepare,
        Action::ClockSkew,
        Action::RestoreClock,
    ];

    /// The action that undoes this one, if any (`for:` applies it automatically).
    pub fn undo(self) -> Option<Action> {
        match self {
            Action::Pause => Some(Action::Unpause),
            Action::Kill | Action::Stop => Some(Action::Start),
            Action::Partition => Some(Action::Heal),
            Action::LoseReply | Action::DelayReplies => Some(Action::ClearProxy),
            Action::SlowFsync | Action::FailFsync | Action::SlowWrites => Some(Action::ClearFs),
            Action::ClockSkew => Some(Action::RestoreClock),
            Action::Unpause
            | Action::Start
            | Action::Restart
            | Action::Heal
            | Action::ResetConnections
            | Action::ClearProxy
            | Action::Crash
            | Action::ClearFs
            | Action::TransferLeader
            | Action::TakeSnapshot
            | Action::CloseContainer
            | Action::Prepare
            | Action::RestoreClock => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Action::Pause => "pause",
            Action::Unpause => "unpause",
            Action::Kill => "kill",
            Action::Stop => "stop",
            Action::Start => "start",
            Action::Restart => "restart",
            Action::Partition => "partition",
            Action::Heal => "heal",
            Action::LoseReply => "lose-reply",
            Action::DelayReplies => "delay-replies",
            Action::ResetConnections => "reset-connections",
            Action::ClearProxy => "clear-proxy",
            Action::SlowFsync => "slow-fsync",
            Action::FailFsync => "fail-fsync",
            Action::SlowWrites => "slow-writes",
            Action::Crash => "crash",
            Action::ClearFs => "clear-fs",
            Action::TransferLeader => "transfer-leader",
            Action::TakeSnapshot => "take-snapshot",
            Action::CloseContainer => "close-container",
            Action::Prepare => "prepare",
            Action::ClockSkew => "clock-skew",
            Action::RestoreClock => "restore-clock",
        }
    }

    /// Faults that act in chaosfs (the node needs `x-chaos: { fs: [...] }`).
    pub fn uses_chaosfs(self) -> bool {
        matches!(
            self,
            Action::SlowFsync | Action::FailFsync | Action::SlowWrites | Action::ClearFs
        )
    }

    /// Faults that act through libfaketime (the node needs `x-chaos: { clock-skew: true }`).
    pub fn uses_faketime(self) -> bool {
        matches!(self, Action::ClockSkew | Action::RestoreClock)
    }

    /// Faults that act in the harness's proxy (the scenario's client ports go through it).
    pub fn uses_proxy(self) -> bool {
        matches!(
            self,
            Action::LoseReply
                | Action::DelayReplies
                | Action::ResetConnections
                | Action::ClearProxy
        )
    }
}

impl Action {
    /// Actions the system adapter carries out with its own admin tools (not every system has
    /// them: `systems::admin_actions`).
    pub fn is_admin(self) -> bool {
        matches!(
            self,
            Action::TransferLeader
                | Action::TakeSnapshot
                | Action::CloseContainer
                | Action::Prepare
        )
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

impl<'de> Deserialize<'de> for Actions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(Action),
            Many(Vec<Action>),
        }
        // Untagged errors are vague; try the common case first for a precise message.
        match OneOrMany::deserialize(deserializer) {
            Ok(OneOrMany::One(a)) => Ok(Actions(vec![a])),
            Ok(OneOrMany::Many(list)) if !list.is_empty() => Ok(Actions(list)),
            Ok(OneOrMany::Many(_)) => Err(de::Error::custom("`do:` needs at least one action")),
            Err(_) => Err(de::Error::custom(
                "expected an action or a list of actions: pause, unpause, kill, stop, start, \
                 restart, partition, heal, lose-reply, delay-replies, reset-connections, clear-proxy, \
                 slow-fsync, fail-fsync, slow-writes, crash, clear-fs, transfer-leader, take-snapshot, \
                 close-container, prepare, clock-skew, restore-clock",
            )),
        }
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

/// Which nodes a fault hits: a node name, a list of names, or a role with a pick.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Target {
    Nodes(Vec<String>),
    Select {
        #[serde(skip_serializing_if = "Option::is_none")]
        role: Option<Role>,
        pick: Pick,
    },
}

impl Default for Target {
    fn default() -> Self {
        Target::Select {
            role: None,
            pick: Pick::One,
        }
    }
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TargetVisitor;
        impl<'de> Visitor<'de> for TargetVisitor {
            type Value = Target;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a node name, a list of node names, or { role: leader|follower, pick: one|all|majority|minority }")
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
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "role" => role = Some(map.next_value::<Role>()?),
                        "pick" => pick = Some(map.next_value::<Pick>()?),
                        other => return Err(de::Error::unknown_field(other, &["role", "pick"])),
                    }
                }
                Ok(Target::Select {
                    role,
                    pick: pick.unwrap_or_default(),
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnSpec {
    pub log: LogTrigger,
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
    pub errno: Option<String>,
    /// fail-fsync: fail this fraction of fsyncs instead of a count.
    pub fraction: Option<f64>,
    /// crash: drop what was written but not fsynced before the kill.
    #[serde(rename = "lose-unsynced")]
    pub lose_unsynced: Option<bool>,
    /// close-container: the container id, or `open` for every open container.
    pub container: Option<ContainerRef>,
    /// clock-skew: how far the node's wall clock runs from true time (`+70s`, `-30s`, or a
    /// range drawn with the seed, `+60s..+90s`).
    pub offset: Option<OffsetRange>,
    /// Without it, a step that never fired or never applied makes the run unknown (exit 2):
    /// a fault that did not happen tested nothing.
    #[serde(default)]
    pub optional: bool,
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
                        E::custom(format!("`{other}`: expected a container id or `open`"))
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
    pub header: Option<IndexMap<String, String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearizableSpec {
    pub model: Spanned<String>,
    /// Budget for the search; the check says `unknown` (exit 2) when it runs out.
    #[serde(default)]
    pub timeout: Option<Dur>,
    /// Fewer operations completed ok than this: `unknown`, not a pass (default 10).
    #[serde(default, rename = "min-ops")]
    pub min_ops: Option<u64>,
}

/// `durable: { min-acknowledged: N }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DurableSpec {
    /// Fewer acknowledged writes on keys with a final read than this: `unknown` (default 1).
    #[serde(default, rename = "min-acknowledged")]
    pub min_acknowledged: Option<u64>,
}

/// `retry-consistent: { min-retried: N }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrySpec {
    /// Fewer calls sent more than once than this: `unknown` (default 1).
    #[serde(default, rename = "min-retried")]
    pub min_retried: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckSpec {
    Linearizable(LinearizableSpec),
    /// Every acknowledged write is in the final reads (workloads with final reads of whole sets).
    Durable(DurableSpec),
    /// A call resent with the same client and call id gets the same answer.
    RetryConsistent(RetrySpec),
    /// After healing and settling, every node's applied index is within `bound` of the
    /// highest (systems with an applied-index probe: ozone).
    Converge(ConvergeSpec),
    /// The fencing workload's events (fencing.jsonl): NoAckedWriteLoss, NoAckAfterTakeover,
    /// OneWriterPerTerm.
    Fencing(NoOptions),
    /// The store enforces If-None-Match / If-Match on PUT: probed before the workload.
    ConditionalWrites(NoOptions),
    /// No node's program exited by itself: every node the faults did not take down was
    /// still running when they ended (faults.jsonl `exited` events name the others).
    StaysUp(NoOptions),
}

/// `converge: { bound: 100, lookups: true }`: how far behind the highest applied index a node
/// may stay; with `lookups`, every node must also give the same answer to a lookup of every key
/// the workload touched (Ozone: each OM in turn made leader and asked).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConvergeSpec {
    #[serde(default = "default_converge_bound")]
    pub bound: u64,
    #[serde(default)]
    pub lookups: bool,
}

fn default_converge_bound() -> u64 {
    100
}

/// A check without settings: `- durable: {}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinalSpec {
    #[serde(default = "yes")]
    pub heal: bool,
    #[serde(default = "default_settle")]
    pub settle: Dur,
    #[serde(default = "yes")]
    pub reads: bool,
}

fn yes() -> bool {
    true
}
fn default_settle() -> Dur {
    Dur(std::time::Duration::from_secs(5))
}

impl Default for FinalSpec {
    fn default() -> Self {
        FinalSpec {
            heal: true,
            settle: default_settle(),
            reads: true,
        }
    }
}

/// A scenario problem with where it is: `file:line:column: key.path: message`.
#[derive(Debug, Clone)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub line: u64,
    pub column: u64,
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// A parsed and validated scenario with everything it refers to.
#[derive(Debug)]
pub struct LoadedScenario {
    pub path: PathBuf,
    pub text: String,
    pub spec: Scenario,
    pub compose_path: PathBuf,
    pub compose: ComposeFile,
    /// The profile's nodes (compose services, by their `x-chaos.node` names), in file order.
    pub nodes: Vec<String>,
    /// The profile played: the scenario's, or its SCM-HA variant under `--scm-ha`.
    pub profile: String,
    /// Loaded with `--scm-ha` (the run's reproduce command repeats it).
    pub scm_ha: bool,
}

impl LoadedScenario {
    /// Whether the nodes that can mount chaosfs (x-chaos.fs) should: only when a fault needs it,
    /// so other scenarios run on the plain filesystem.
    pub fn uses_chaosfs(&self) -> bool {
        self.spec.faults.iter().any(|f| {
            let s = &f.value;
            s.actions.0.iter().any(|a| a.uses_chaosfs()) || s.lose_unsynced == Some(true)
        })
    }

    /// Whether the nodes that can take clock skew (x-chaos.clock-skew) load libfaketime: only
    /// when a fault needs it, so other scenarios run on the plain clock.
    pub fn uses_faketime(&self) -> bool {
        self.spec
            .faults
            .iter()
            .any(|f| f.value.actions.0.iter().any(|a| a.uses_faketime()))
    }

    /// Whether nodes with chaosfs should track un-fsynced data from the start (a crash drops it).
    pub fn tracks_unsynced(&self) -> bool {
        self.spec
            .faults
            .iter()
            .any(|f| f.value.lose_unsynced == Some(true))
    }

    /// Whether clients go through the proxy: asked for, or needed by a proxy fault.
    pub fn uses_proxy(&self) -> bool {
        self.spec.cluster.proxy
            || self
                .spec
                .faults
                .iter()
                .any(|f| f.value.actions.0.iter().any(|a| a.uses_proxy()))
    }

    /// The scenario text with the seed actually used, as the run folder keeps it, its
    /// credentials replaced by `"[redacted]"` (it still parses, for `chaos check RUN_DIR`).
    pub fn resolved_text(&self, seed: u64) -> String {
        redact_credentials(&text_with_seed(&self.text, seed))
    }

    /// Secret strings that must not reach the run folder: node logs are scrubbed of them
    /// wherever they appear. Access key ids are not in the list (a test key id such as
    /// `chaos` is also an ordinary word); logs lose them where they stand as credentials
    /// (`Credential=`, `access_key: ...`, Authorization headers), as the report redacts.
    pub fn secrets(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(s3) = &self.spec.s3 {
            out.push(s3.secret_key.clone());
        }
        for (k, v) in &self.spec.cluster.environment {
            let k = k.to_ascii_lowercase();
            if ["secret", "password", "passwd", "token"]
                .iter()
                .any(|w| k.contains(w))
            {
                out.push(v.clone());
            }
        }
        // Short values would blank ordinary words of the logs; keys that short are test keys.
        out.retain(|s| s.len() >= 4);
        out
    }
}

/// Whether a key names a credential (`secret-key`, `MINIO_ROOT_PASSWORD`, `access_key`, ...).
fn secret_name(key: &str) -> bool {
    let k = key.to_ascii_lowercase().replace('_', "-");
    [
        "secret",
        "password",
        "passwd",
        "token",
        "access-key",
        "root-user",
        "credential",
    ]
    .iter()
    .any(|w| k.contains(w))
}

/// Replaces the value of every `key: value` whose key names a credential, block or flow style,
/// with `"[redacted]"`, keeping the layout and comments.
pub fn redact_credentials(text: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(
            r#"(?m)(^|[\s{,])([A-Za-z0-9_.-]+)(\s*:[ \t]*)("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,{}\[#][^,}#\n]*?)([ \t]*(?:[,}#]|$))"#,
        )
        .expect("redaction pattern")
    });
    re.replace_all(text, |c: &regex::Captures| {
        if secret_name(&c[2]) {
            format!("{}{}{}\"[redacted]\"{}", &c[1], &c[2], &c[3], &c[5])
        } else {
            c[0].to_string()
        }
    })
    .into_owned()
}

/// Replaces (or adds) the top-level `seed:` line, keeping comments and layout.
fn text_with_seed(text: &str, seed: u64) -> String {
    let mut out = String::new();
    let mut replaced = false;
    for line in text.lines() {
        if !replaced && line.starts_with("seed:") {
            out.push_str(&format!("seed: {seed}\n"));
            replaced = true;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !replaced {
        out.push_str(&format!("seed: {seed}\n"));
    }
    out
}

/// How `chaos run` / `chaos lint` load a scenario, beyond what its file says.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// `--scm-ha`: play an Ozone scenario on its profile's three-SCM variant
    /// (`ozone` -> `ozone-scm-ha`); any other system is an error.
    pub scm_ha: bool,
}

pub fn load(path: &Path) -> Result<LoadedScenario, Vec<ScenarioError>> {
    load_with(path, LoadOptions::default())
}

pub fn load_with(path: &Path, options: LoadOptions) -> Result<LoadedScenario, Vec<ScenarioError>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![ScenarioError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            path: String::new(),
            message: format!("cannot read: {e}"),
        }]
    })?;
    load_text(path, text, options)
}

/// Loads a scenario from text (a schedule `chaos shrink` or `--replay` wrote); `path` names it
/// in messages and is where a relative compose file is looked for.
pub fn load_text(
    path: &Path,
    text: String,
    options: LoadOptions,
) -> Result<LoadedScenario, Vec<ScenarioError>> {
    let spec = parse(path, &text).map_err(|e| vec![e])?;
    let mut problems = Problems::new(path);
    let mut profile = spec.cluster.profile.value.clone();
    if options.scm_ha {
        match systems::scm_ha_profile(&spec.system.value, &profile) {
            Some(variant) => profile = variant,
            None => {
                problems.at(
                    &spec.system.referenced,
                    "system",
                    format!(
                        "--scm-ha plays an Ozone scenario on three SCMs (profile `ozone-scm-ha`); \
                         this scenario is system `{}`, which has no SCM",
                        spec.system.value
                    ),
                );
                return Err(problems.list);
            }
        }
    }
    let (compose_path, compose) = match find_compose(path, &spec.cluster.compose) {
        Ok(found) => found,
        Err(message) => {
            problems.at(&spec.cluster.compose.referenced, "cluster.compose", message);
            return Err(problems.list);
        }
    };
    let nodes = compose.profile_nodes(&profile);
    if nodes.is_empty() {
        let flag = if profile != spec.cluster.profile.value {
            format!(
                " (--scm-ha plays profile `{}` on `{profile}`)",
                spec.cluster.profile.value
            )
        } else {
            String::new()
        };
        problems.at(
            &spec.cluster.profile.referenced,
            "cluster.profile",
            format!(
                "no service of {} is in profile `{profile}`{flag} (profiles: {})",
                compose_path.display(),
                compose.profiles().join(", ")
            ),
        );
    }
    // From here on the compose file is the profile's cluster, its services named as nodes.
    let compose = compose.into_profile(&profile);
    let fs_nodes: Vec<String> = nodes
        .iter()
        .filter(|n| compose.service(n).is_some_and(|s| !s.x_chaos.fs.is_empty()))
        .cloned()
        .collect();
    let clocks: BTreeMap<String, Result<(), String>> = nodes
        .iter()
        .filter_map(|n| Some((n.clone(), compose.service(n)?.x_chaos.clock_skew.support())))
        .collect();
    let facts = NodeFacts {
        nodes: &nodes,
        fs_nodes: &fs_nodes,
        clocks: &clocks,
    };
    validate(&spec, &facts, &mut problems);
    if problems.list.is_empty() {
        Ok(LoadedScenario {
            path: path.to_path_buf(),
            text,
            spec,
            compose_path,
            compose,
            nodes,
            profile,
            scm_ha: options.scm_ha,
        })
    } else {
        Err(problems.list)
    }
}

/// Parses a scenario without validating it against a cluster (enough to re-check a run folder).
pub fn parse_file(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: path.to_path_buf(),
        line: 0,
        column: 0,
        path: String::new(),
        message: format!("cannot read: {e}"),
    })?;
    parse(path, &text)
}

/// Parses scenario text without validating it (`path` names it in messages).
pub fn parse_text(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    parse(path, text)
}

/// Parses the YAML, keeping the key path of the first error (serde_path_to_error) and the
/// position serde-saphyr reports.
fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    let mut key_path = String::new();
    let options = serde_saphyr::options! { with_snippet: false };
    let result = serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            // `Spanned<T>` wraps its value in a field of its own: not a key the user wrote.
            key_path = e.path().to_string().replace(".value.", ".");
            e.into_inner()
        })
    });
    result.map_err(|e| {
        let location = e.location().unwrap_or(Location::UNKNOWN);
        let mut message = e.render();
        // The rendered message repeats the position; keep only the words.
        if let Some(stripped) = message.split(" at line ").next() {
            message = stripped.to_string();
        }
        ScenarioError {
            file: path.to_path_buf(),
            line: location.line(),
            column: location.column(),
            path: if key_path == "." {
                String::new()
            } else {
                key_path
            },
            message,
        }
    })
}

struct Problems {
    file: PathBuf,
    list: Vec<ScenarioError>,
}

impl Problems {
    fn new(file: &Path) -> Self {
        Problems {
            file: file.to_path_buf(),
            list: Vec::new(),
        }
    }

    fn at(&mut self, location: &Location, path: impl Into<String>, message: impl Into<String>) {
        self.list.push(ScenarioError {
            file: self.file.clone(),
            line: location.line(),
            column: location.column(),
            path: path.into(),
            message: message.into(),
        });
    }
}

fn find_compose(
    scenario: &Path,
    compose: &Spanned<String>,
) -> Result<(PathBuf, ComposeFile), String> {
    let name = Path::new(&compose.value);
    let start = scenario
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    let candidate = if name.is_absolute() {
        Some(name.to_path_buf())
    } else {
        start
            .ancestors()
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    };
    let Some(found) = candidate.filter(|p| p.is_file()) else {
        return Err(format!(
            "compose file `{}` not found beside the scenario or in its parent folders",
            compose.value
        ));
    };
    let compose = ComposeFile::load(&found).map_err(|e| e.to_string())?;
    Ok((found, compose))
}

/// What the compose profile says about its nodes, for the checks that name nodes.
struct NodeFacts<'a> {
    nodes: &'a [String],
    /// Nodes that mount chaosfs (x-chaos.fs).
    fs_nodes: &'a [String],
    /// Node -> whether it can take clock skew, or why not (x-chaos.clock-skew).
    clocks: &'a BTreeMap<String, Result<(), String>>,
}

fn validate(spec: &Scenario, facts: &NodeFacts, problems: &mut Problems) {
    let (nodes, fs_nodes) = (facts.nodes, facts.fs_nodes);
    let adapter = systems::lookup(&spec.system.value);
    if adapter.is_none() {
        problems.at(
            &spec.system.referenced,
            "system",
            format!(
                "unknown system `{}` (systems: {})",
                spec.system.value,
                systems::names().join(", ")
            ),
        );
    }
    let check_node = |problems: &mut Problems, location: &Location, key: &str, node: &str| {
        if !nodes.is_empty() && !nodes.iter().any(|n| n == node) {
            problems.at(
                location,
                key,
                format!(
                    "unknown node `{node}` (nodes of profile: {})",
                    nodes.join(", ")
                ),
            );
        }
    };
    let w = &spec.workload;
    if w.processes == 0 {
        problems.at(
            &Location::UNKNOWN,
            "workload.processes",
            "needs at least one process",
        );
    }
    if w.keys == 0 {
        problems.at(
            &Location::UNKNOWN,
            "workload.keys",
            "needs at least one key",
        );
    }
    if let Some(chosen) = &w.nodes {
        for node in &chosen.value {
            check_node(problems, &chosen.referenced, "workload.nodes", node);
        }
    }
    if let Some(adapter) = adapter {
        if !adapter.workloads.contains(&w.kind.value) {
            let name = |k: &WorkloadKind| {
                serde_json::to_value(k)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            };
            problems.at(
                &w.kind.referenced,
                "workload.kind",
                format!(
                    "system `{}` has no {} workload (it has: {})",
                    adapter.name,
                    name(&w.kind.value),
                    adapter
                        .workloads
                        .iter()
                        .map(name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }

    for (i, step) in spec.faults.iter().enumerate() {
        let key = format!("faults[{i}]");
        let at = &step.referenced;
        let s = &step.value;
        let triggers = [
            s.at.is_some(),
            s.after.is_some(),
            s.on.is_some(),
            s.when.is_some(),
            s.every.is_some(),
        ]
        .iter()
        .filter(|t| **t)
        .count();
        if triggers != 1 {
            problems.at(
                at,
                &key,
                format!(
                    "a fault step needs exactly one trigger of at, after, on, when, every (found {triggers})"
                ),
            );
        }
        if s.actions.0.len() > 1 && s.every.is_none() {
            problems.at(
                at,
                format!("{key}.do"),
                "a list of actions is only allowed with `every:` (one is picked each time)",
            );
        }
        let has = |a: Action| s.actions.0.contains(&a);
        if s.matching.is_some() && !has(Action::LoseReply) {
            problems.at(
                at,
                format!("{key}.match"),
                "`match:` applies to lose-reply only",
            );
        }
        if s.count.is_some() && !has(Action::LoseReply) && !has(Action::FailFsync) {
            problems.at(
                at,
                format!("{key}.count"),
                "`count:` applies to lose-reply and fail-fsync",
            );
        }
        let delayed =
            has(Action::DelayReplies) || has(Action::SlowFsync) || has(Action::SlowWrites);
        if s.delay.is_some() != delayed {
            problems.at(
                at,
                format!("{key}.delay"),
                "delay-replies, slow-fsync and slow-writes need `delay:`, and only they take one",
            );
        }
        if s.jitter.is_some() && !(has(Action::SlowFsync) || has(Action::SlowWrites)) {
            problems.at(
                at,
                format!("{key}.jitter"),
                "`jitter:` applies to slow-fsync and slow-writes",
            );
        }
        if (s.errno.is_some() || s.fraction.is_some()) && !has(Action::FailFsync) {
            problems.at(
                at,
                format!("{key}.errno"),
                "`errno:` and `fraction:` apply to fail-fsync only",
            );
        }
        if has(Action::FailFsync) && s.count.is_some() == s.fraction.is_some() {
            problems.at(
                at,
                format!("{key}.count"),
                "fail-fsync needs `count:` or `fraction:` (one of them)",
            );
        }
        if s.lose_unsynced.is_some() && !has(Action::Crash) {
            problems.at(
                at,
                format!("{key}.lose-unsynced"),
                "`lose-unsynced:` applies to crash only",
            );
        }
        if s.container.is_some() != has(Action::CloseContainer) {
            problems.at(
                at,
                format!("{key}.container"),
                "close-container needs `container:` (the container id), and only it takes one",
            );
        }
        if let Some(adapter) = adapter {
            for action in s.actions.0.iter().filter(|a| a.is_admin()) {
                if !systems::admin_actions(adapter.name).contains(action) {
                    problems.at(
                        at,
                        format!("{key}.do"),
                        format!("system `{}` has no admin action {action}", adapter.name),
                    );
                }
            }
        }
        if let Some(paths) = &s.paths {
            if let Err(e) = regex::Regex::new(&paths.value) {
                problems.at(
                    &paths.referenced,
                    format!("{key}.paths"),
                    format!("invalid regex: {e}"),
                );
            }
        }
        if s.offset.is_some() != has(Action::ClockSkew) {
            problems.at(
                at,
                format!("{key}.offset"),
                "clock-skew needs `offset:` (e.g. +70s, -30s, +60s..+90s), and only it takes one",
            );
        }
        if s.actions.0.iter().any(|a| a.uses_faketime()) {
            // A role or a pick may land on any node of the profile, so each must take it.
            let (location, candidates): (Location, Vec<&String>) = match &s.target {
                Some(t) => match &t.value {
                    Target::Nodes(list) => (t.referenced, list.iter().collect()),
                    Target::Select { .. } => (t.referenced, nodes.iter().collect()),
                },
                None => (*at, nodes.iter().collect()),
            };
            for node in candidates {
                if let Some(Err(why)) = facts.clocks.get(node) {
                    problems.at(
                        &location,
                        format!("{key}.target"),
                        format!("node `{node}` cannot take clock-skew: {why}"),
                    );
                }
            }
        }
        let needs_fs = s.actions.0.iter().any(|a| a.uses_chaosfs())
            || (has(Action::Crash) && s.lose_unsynced == Some(true));
        if needs_fs {
            if let Some(Target::Nodes(list)) = s.target.as_ref().map(|t| &t.value) {
                for node in list {
                    if !fs_nodes.contains(node) {
                        problems.at(
                            &s.target.as_ref().map_or(*at, |t| t.referenced),
                            format!("{key}.target"),
                            format!("node `{node}` has no chaosfs mount (x-chaos: {{ fs: [...] }} in the compose file)"),
                        );
                    }
                }
            } else if fs_nodes.is_empty() {
                problems.at(
                    at,
                    &key,
                    "filesystem faults need nodes with x-chaos: { fs: [...] } in the compose file",
                );
            }
        }
        if let Some(path) = s.matching.as_ref().and_then(|m| m.path.as_ref()) {
            if let Err(e) = regex::Regex::new(&path.value) {
                problems.at(
                    &path.referenced,
                    format!("{key}.match.path"),
                    format!("invalid regex: {e}"),
                );
            }
        }
        let partitions = s.actions.0.contains(&Action::Partition);
        if s.mode.is_some() && !partitions {
            problems.at(
                at,
                format!("{key}.mode"),
                "`mode:` applies to partition only",
            );
        }
        if let Some(grudge) = &s.grudge {
            if s.actions.0 != [Action::Partition] {
                problems.at(
                    &grudge.referenced,
                    format!("{key}.grudge"),
                    "`grudge:` applies to `do: partition` only",
                );
            }
            for (node, drops) in &grudge.value {
                for n in std::iter::once(node).chain(drops) {
                    check_node(problems, &grudge.referenced, &format!("{key}.grudge"), n);
                }
            }
        }
        if s.duration.is_some() && s.actions.0.iter().all(|a| a.undo().is_none()) {
            problems.at(
                at,
                format!("{key}.for"),
                "`for:` needs an action that can be undone (pause, kill, stop, partition)",
            );
        }
        if let Some(target) = &s.target {
            if let Target::Nodes(list) = &target.value {
                for node in list {
                    check_node(problems, &target.referenced, &format!("{key}.target"), node);
                }
            }
            if let (Target::Select { role: Some(_), .. }, Some(adapter)) = (&target.value, adapter)
            {
                if !adapter.has_roles {
                    problems.at(
                        &target.referenced,
                        format!("{key}.target.role"),
                        format!("system `{}` has no roles", adapter.name),
                    );
                }
            }
        }
        if let Some(on) = &s.on {
            if let Some(node) = &on.log.node {
                check_node(
                    problems,
                    &node.referenced,
                    &format!("{key}.on.log.node"),
                    &node.value,
                );
            }
            if let Err(e) = regex::Regex::new(&on.log.regex.value) {
                problems.at(
                    &on.log.regex.referenced,
                    format!("{key}.on.log.regex"),
                    format!("invalid regex: {e}"),
                );
            }
        }
        if let Some(when) = &s.when {
            if let Some(node) = &when.node {
                check_node(
                    problems,
                    &node.referenced,
                    &format!("{key}.when.node"),
                    &node.value,
                );
            }
            if when.role.is_some() == when.behind.is_some() {
                problems.at(
                    at,
                    format!("{key}.when"),
                    "`when:` needs one of `role:` and `behind:`",
                );
            }
            if let (Some(_), Some(adapter)) = (when.behind, adapter) {
                if !systems::has_applied_index(adapter.name) {
                    problems.at(
                        at,
                        format!("{key}.when.behind"),
                        format!("system `{}` has no applied-index probe", adapter.name),
                    );
                }
            }
        }
    }

    // The `s3:` section: credentials, bucket and port of the systems that speak S3; needed by
    // system `s3` always and by the others for the object-store workloads.
    let speaks_s3 = crate::systems::speaks_s3(&spec.system.value);
    let needs_s3 = spec.system.value == "s3"
        || (speaks_s3 && matches!(w.kind.value, WorkloadKind::S3Object | WorkloadKind::Fencing));
    if needs_s3 && spec.s3.is_none() {
        problems.at(
            &spec.system.referenced,
            "s3",
            format!(
                "system `{}` needs an `s3:` section for this workload: {{ access-key, secret-key, bucket, region, port }}",
                spec.system.value
            ),
        );
    }
    if !speaks_s3 && spec.s3.is_some() {
        problems.at(
            &Location::UNKNOWN,
            "s3",
            format!(
                "`s3:` applies to the systems that speak S3 ({})",
                crate::systems::s3_systems().join(", ")
            ),
        );
    }
    // The per-kind sections: each belongs to its workload, located at the section.
    let misplaced = |section: &str, kind: &str, at: &Location| {
        (
            *at,
            format!("workload.{section}"),
            format!("`{section}:` applies to the {kind} workload only"),
        )
    };
    let mut section_problems = Vec::new();
    if let Some(mix) = &w.mix {
        if w.kind.value != WorkloadKind::S3Object {
            section_problems.push(misplaced("mix", "s3-object", &mix.referenced));
        }
        if mix.value.total() == 0 {
            section_problems.push((
                mix.referenced,
                "workload.mix".into(),
                "needs at least one operation with a weight above 0".into(),
            ));
        }
    }
    if let Some(fencing) = &w.fencing {
        if w.kind.value != WorkloadKind::Fencing {
            section_problems.push(misplaced("fencing", "fencing", &fencing.referenced));
        }
        if fencing.value.terms == 0 || fencing.value.contenders == 0 {
            section_problems.push((
                fencing.referenced,
                "workload.fencing".into(),
                "needs at least one term and one contender".into(),
            ));
        }
    }
    if let Some(stream) = &w.stream {
        if w.kind.value != WorkloadKind::Stream {
            section_problems.push(misplaced("stream", "stream", &stream.referenced));
        }
        if stream.value.length == 0 {
            section_problems.push((
                stream.referenced,
                "workload.stream".into(),
                "length must be at least 1 byte".into(),
            ));
        }
    }
    if let Some(lease) = &w.lease {
        if w.kind.value != WorkloadKind::Lease {
            section_problems.push(misplaced("lease", "lease", &lease.referenced));
        }
        if lease.value.close_after.0 <= lease.value.recover_after.0 {
            section_problems.push((
                lease.referenced,
                "workload.lease".into(),
                "close-after must come after recover-after (the recoverLease races an open file)"
                    .into(),
            ));
        }
    }
    if w.duplicate_after.is_some() && w.kind.value != WorkloadKind::Create {
        section_problems.push((
            w.kind.referenced,
            "workload.duplicate-after".into(),
            "duplicate-after applies to the create workload only".into(),
        ));
    }
    if w.retries == 0 && !w.resend_after.0.is_zero() {
        section_problems.push((
            w.kind.referenced,
            "workload.resend-after".into(),
            "resend-after applies to resends: set `retries` too".into(),
        ));
    }
    for (at, key, message) in section_problems {
        problems.at(&at, key, message);
    }

    for (i, check) in spec.checks.iter().enumerate() {
        match &check.value {
            CheckSpec::Durable(_) | CheckSpec::RetryConsistent(_) | CheckSpec::StaysUp(_) => {}
            CheckSpec::Converge(_) => {
                if let Some(adapter) = adapter {
                    if !systems::has_applied_index(adapter.name) {
                        problems.at(
                            &check.referenced,
                            format!("checks[{i}].converge"),
                            format!(
                                "system `{}` has no applied-index probe (converge: ozone)",
                                adapter.name
                            ),
                        );
                    }
                }
            }
            CheckSpec::Fencing(_) => {
                if w.kind.value != WorkloadKind::Fencing {
                    problems.at(
                        &check.referenced,
                        format!("checks[{i}].fencing"),
                        "the fencing check reads the fencing workload's events: needs `workload: { kind: fencing }`",
                    );
                }
            }
            CheckSpec::ConditionalWrites(_) => {
                if !speaks_s3 {
                    problems.at(
                        &check.referenced,
                        format!("checks[{i}].conditional-writes"),
                        "the conditional-writes probe needs an object store (a system that speaks S3)",
                    );
                }
            }
            CheckSpec::Linearizable(lin) => {
                if lin.model.value.parse::<checker::Model>().is_err() {
                    problems.at(
                        &lin.model.referenced,
                        format!("checks[{i}].linearizable.model"),
                        format!(
                            "unknown model `{}` (models: {})",
                            lin.model.value,
                            checker::Model::NAMES.join(", ")
                        ),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Scenario, ScenarioError> {
        parse(Path::new("s.yaml"), text)
    }

    const GOOD: &str = "name: t\nsystem: etcd\ncluster: { profile: etcd }\nworkload:\n  kind: register\n  rate: 10/s\n  duration: 5s\nfaults:\n  - at: 1s\n    do: pause\n    target: { role: leader }\n    for: 1s\nchecks:\n  - linearizable: { model: cas-register }\n";

    #[test]
    fn a_good_scenario_parses() {
        let s = parse_text(GOOD).unwrap();
        assert_eq!(s.workload.processes, 6);
        assert_eq!(s.faults.len(), 1);
        assert!(matches!(
            s.faults[0].value.target.as_ref().unwrap().value,
            Target::Select {
                role: Some(Role::Leader),
                pick: Pick::One
            }
        ));
    }

    #[test]
    fn unknown_keys_are_errors_with_position_and_path() {
        let text = GOOD.replace("    for: 1s\n", "    for: 1s\n    fore: 2s\n");
        let e = parse_text(&text).unwrap_err();
        assert_eq!(e.line, 13, "{e}");
        assert!(e.path.starts_with("faults[0]"), "{e}");
        assert!(e.message.contains("fore"), "{e}");
    }

    #[test]
    fn bad_durations_name_the_key() {
        let text = GOOD.replace("duration: 5s", "duration: 5 parsecs");
        let e = parse_text(&text).unwrap_err();
        assert_eq!((e.line, e.path.as_str()), (7, "workload.duration"), "{e}");
        assert!(e.message.contains("5 parsecs"), "{e}");
    }

    #[test]
    fn wrong_types_name_the_key() {
        let text = GOOD.replace("rate: 10/s", "rate: 10/s\n  keys: many");
        let e = parse_text(&text).unwrap_err();
        assert_eq!(e.path, "workload.keys", "{e}");
        assert_eq!(e.line, 7, "{e}");
    }

    #[test]
    fn action_names_are_the_yaml_names() {
        for action in Action::ALL {
            assert_eq!(serde_json::to_value(action).unwrap(), action.name());
        }
    }

    #[test]
    fn credentials_are_redacted_and_the_text_still_parses() {
        let text = "name: t\ns3: { access-key: chaos, secret-key: \"chaos-secret-key\", bucket: b }\ncluster:\n  environment:\n    MINIO_ROOT_PASSWORD: hunter22 # pw\n    OTHER: keep\ns3b:\n  secret-key: 'x y'\n";
        let out = redact_credentials(text);
        for secret in ["chaos-secret-key", "hunter22", "x y", "access-key: chaos"] {
            assert!(!out.contains(secret), "{out}");
        }
        assert!(out.contains("bucket: b }"), "{out}");
        assert!(out.contains("OTHER: keep"), "{out}");
        assert!(out.contains("# pw"), "{out}");
        let full = GOOD.to_string() + "s3:\n  access-key: ak\n  secret-key: sk-123\n";
        let parsed = parse_text(&redact_credentials(&full)).unwrap();
        assert_eq!(parsed.s3.unwrap().secret_key, "[redacted]");
    }

    #[test]
    fn resolved_text_records_the_seed() {
        assert_eq!(
            text_with_seed("name: t\nseed: 3 # x\n", 9),
            "name: t\nseed: 9\n"
        );
        assert_eq!(text_with_seed("name: t\n", 9), "name: t\nseed: 9\n");
    }
}
