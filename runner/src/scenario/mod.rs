//! Scenarios: the YAML a user writes, parsed strictly (unknown keys are errors) and validated
//! against the compose file, the system adapter and the checker before any container starts.

pub mod compose;
pub mod named;
pub mod origin;
pub mod plan;
pub mod reached;
mod steps;
pub mod units;
pub mod wording;
mod workload;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indexmap::IndexMap;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_saphyr::{Location, Spanned};

use compose::ComposeFile;

pub use crate::error::ScenarioError;
pub use reached::*;
pub use steps::*;
pub use units::{Dur, DurRange, OffsetRange, Rate};
pub use workload::*;

/// A scenario as written. Field names are the YAML keys.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// One safe path component (the run folder is `OUT/NAME/...`): see [`scenario_name`].
    #[serde(deserialize_with = "scenario_name")]
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
    /// The bug's preconditions: named predicates a run must reach for its verdict to say
    /// anything about the bug (see `reached.rs`).
    #[serde(default, deserialize_with = "reached::some_preconditions")]
    pub reached: IndexMap<String, Spanned<Precondition>>,
    /// Object stores (`system: s3`): credentials, bucket, region, port.
    #[serde(default)]
    pub s3: Option<Spanned<S3Spec>>,
    /// Imported from a model checker's trace (`chaos trace import`): which trace, and which
    /// `reached:` predicate observes each of its steps.
    #[serde(default)]
    pub trace: Option<origin::TraceOrigin>,
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
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

/// `cluster.environment`: each name one a process's environment can hold (neither empty nor
/// with `=` or a NUL in it, which would cut it into another variable or none).
fn environment_names<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<IndexMap<String, String>, D::Error> {
    let map = IndexMap::<String, String>::deserialize(d)?;
    for name in map.keys() {
        let why = if name.is_empty() {
            "an environment variable needs a name"
        } else if name.contains('=') {
            "`=` ends an environment variable's name, so the node would get another variable"
        } else if name.contains('\0') {
            "a NUL ends an environment variable's name"
        } else {
            continue;
        };
        return Err(de::Error::custom(format!(
            "{}: {why}",
            chaos_core::shown::shown(name)
        )));
    }
    Ok(map)
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
    #[serde(default, deserialize_with = "environment_names")]
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
pub const PARTITION_MODES: &[PartitionMode] = &[
    PartitionMode::Isolate,
    PartitionMode::Halves,
    PartitionMode::MajorityRing,
    PartitionMode::Bridge,
];
pub const PICKS: &[Pick] = &[Pick::One, Pick::All, Pick::Majority, Pick::Minority];
pub const ROLES: &[Role] = &[Role::Leader, Role::Follower];
pub const READ_MODES: &[ReadConsistency] =
    &[ReadConsistency::Linearizable, ReadConsistency::Serializable];
pub const OUTCOMES: &[OutcomeFilter] = &[
    OutcomeFilter::Ok,
    OutcomeFilter::Fail,
    OutcomeFilter::Info,
    OutcomeFilter::Definite,
];
pub const JVM_EVENTS: &[JvmEvent] = &[
    JvmEvent::Delayed,
    JvmEvent::Threw,
    JvmEvent::Held,
    JvmEvent::Released,
    JvmEvent::LetGo,
    JvmEvent::Fired,
];
pub const ETAG_FORMS: &[EtagForm] = &[EtagForm::Quoted, EtagForm::Unquoted];

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

/// `staleness: { at-most: 5s }`: the bound a read mode documents (a lease time).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StalenessSpec {
    #[serde(rename = "at-most")]
    pub at_most: Dur,
}

/// A check a scenario asks for, with its settings. Its variant is the check's name, written
/// once: serde reads it as the scenario key, and [`CheckKind`] (the variants without their
/// settings, derived) is how the checks' registry names each check.
#[derive(Debug, Clone, Deserialize, strum::EnumDiscriminants)]
#[serde(rename_all = "kebab-case")]
#[strum_discriminants(
    name(CheckKind),
    derive(strum::IntoStaticStr, strum::VariantArray),
    strum(serialize_all = "kebab-case")
)]
pub enum CheckSpec {
    Linearizable(LinearizableSpec),
    /// Every acknowledged write is in the final reads (workloads with final reads of whole sets).
    Durable(DurableSpec),
    /// A call resent with the same client and call id gets the same answer.
    RetryConsistent(RetrySpec),
    /// No read returned a value overwritten longer than `at-most` before it began (register
    /// workloads: unique values).
    Staleness(StalenessSpec),
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

impl CheckSpec {
    /// Every check's name (its scenario key), in the order of the variants: serde's names for
    /// them, which [`CheckKind`]'s are held to.
    pub fn names() -> &'static [&'static str] {
        named::variants_of::<CheckSpec>()
    }
}

impl CheckKind {
    /// The check's name (its scenario key, result.json's `check`).
    pub fn name(self) -> &'static str {
        self.into()
    }
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
    /// `--attach PROJECT`: played on the nodes of a compose project a user brought up, not on
    /// a cluster of the harness's own (`load::attach_to`).
    pub attach: Option<String>,
}

impl LoadedScenario {
    /// Whether nodes with chaosfs should track un-fsynced data from the start (a crash drops it).
    pub fn tracks_unsynced(&self) -> bool {
        self.spec
            .faults
            .iter()
            .any(|f| f.value.lose_unsynced == Some(true))
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
            out.push(s3.value.secret_key.clone());
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

/// Parses a scenario without validating it against a cluster (enough to re-check a run folder).
pub fn parse_file(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = read_file(path)?;
    parse(path, &text)
}

/// A scenario file's text: a regular file of at most [`wording::MAX_FILE_BYTES`], in UTF-8
/// (the error names the line and column of the first byte that is not).
pub fn read_file(path: &Path) -> Result<String, ScenarioError> {
    let error = |line: u64, column: u64, message: String| ScenarioError {
        file: path.to_path_buf(),
        line,
        column,
        path: String::new(),
        message,
    };
    let bytes = read_limited(path, wording::MAX_FILE_BYTES)
        .map_err(|e| error(0, 0, format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count() as u64;
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = 1 + String::from_utf8_lossy(&valid[line_start..])
            .chars()
            .count() as u64;
        error(
            line,
            column,
            "not valid UTF-8 (a scenario is UTF-8 text)".into(),
        )
    })
}

/// Reads at most `limit` bytes of a regular file: a device, a folder or a larger file is an
/// error that says so (`chaos lint /dev/zero` must not read until memory runs out).
pub fn read_limited(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    // Asked before opening: opening a named pipe waits for a writer, forever.
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let too_large =
        |len: u64| std::io::Error::other(checker::read::larger_than(len, limit, "this file"));
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        // It grew while it was read.
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Parses scenario text without validating it (`path` names it in messages).
pub fn parse_text(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    parse(path, text)
}

/// serde_path_to_error's path as the user wrote it: `Spanned<T>` wraps each value in a field
/// `value` of its own (`workload.nodes.value[0]` is `workload.nodes[0]`), and an unknown
/// segment (`?`, `.`) is no key.
pub fn user_key_path(path: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for segment in path.split('.') {
        // What follows the wrapper's name is the index into the user's list, if any.
        let (name, index) = match segment.find('[') {
            Some(i) => segment.split_at(i),
            None => (segment, ""),
        };
        if name == "value" || name == "?" || name.is_empty() {
            match out.last_mut() {
                Some(last) => last.push_str(index),
                None if !index.is_empty() => out.push(index.to_string()),
                None => {}
            }
        } else {
            out.push(segment.to_string());
        }
    }
    out.join(".")
}

/// The longest `name:`, in characters (a path component; file systems allow 255 bytes).
pub const MAX_NAME_CHARS: usize = 100;

/// Whether `name` is a scenario name: 1 to [`MAX_NAME_CHARS`] letters, digits, `-`, `_`
/// and `.`, starting with a letter or digit. It is one component of the run folder's path, so
/// `/`, `..`, `.`, an absolute path or an empty name could write outside the output folder.
pub fn name_problem(name: &str) -> Option<String> {
    let allowed = "letters, digits, `-`, `_` and `.`, starting with a letter or digit";
    let n = name.chars().count();
    if name.is_empty() {
        Some(format!(
            "is empty; a name is 1 to {MAX_NAME_CHARS} {allowed}"
        ))
    } else if n > MAX_NAME_CHARS {
        Some(format!(
            "is {n} characters long; a name is at most {MAX_NAME_CHARS} ({allowed})"
        ))
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        Some(format!(
            "{} has {}, which a name may not have: a name is one folder of the run folder's path, of {allowed}",
            chaos_core::shown::shown(name),
            chaos_core::shown::shown(&c.to_string())
        ))
    } else if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        Some(format!(
            "{} starts with `{}`: a name is {allowed}",
            chaos_core::shown::shown(name),
            &name[..1]
        ))
    } else {
        None
    }
}

fn scenario_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let name = String::deserialize(d)?;
    match name_problem(&name) {
        Some(problem) => Err(serde::de::Error::custom(format!("the name {problem}"))),
        None => Ok(name),
    }
}

/// Parses the YAML (see [`wording::parse_yaml`]): an error is located with its key path.
pub(crate) fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    wording::parse_yaml(text).map_err(|e| e.in_file(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Scenario, ScenarioError> {
        parse(Path::new("s.yaml"), text)
    }

    const GOOD: &str = "name: t\nsystem: etcd\ncluster: { profile: etcd }\nworkload:\n  kind: register\n  rate: 10/s\n  duration: 5s\nfaults:\n  - at: 1s\n    do: pause\n    target: { role: leader }\n    for: 1s\nchecks:\n  - linearizable: { model: cas-register }\n";

    /// A check's kind names it as serde reads its scenario key: the two derives agree.
    #[test]
    fn each_check_kind_is_named_as_its_scenario_key() {
        use strum::VariantArray;
        let kinds: Vec<&str> = CheckKind::VARIANTS.iter().map(|k| k.name()).collect();
        assert_eq!(kinds, CheckSpec::names());
    }

    #[test]
    fn a_good_scenario_parses() {
        let s = parse_text(GOOD).unwrap();
        assert_eq!(s.workload.processes, 6);
        assert_eq!(s.faults.len(), 1);
        assert!(matches!(
            s.faults[0].value.target.as_ref().unwrap().value,
            Target::Select {
                role: Some(Role::Leader),
                pick: Pick::One,
                among: None
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

    /// Spanned's wrapper field never shows, not even before a list index (issue 25).
    #[test]
    fn key_paths_are_the_users() {
        assert_eq!(
            user_key_path("workload.nodes.value[0]"),
            "workload.nodes[0]"
        );
        assert_eq!(
            user_key_path("faults[1].target.value[2]"),
            "faults[1].target[2]"
        );
        assert_eq!(user_key_path("workload.kind.value"), "workload.kind");
        assert_eq!(user_key_path("checks[0].value"), "checks[0]");
        assert_eq!(user_key_path("?"), "");
        assert_eq!(user_key_path("faults[0].?"), "faults[0]");
        assert_eq!(user_key_path("."), "");
    }

    #[test]
    fn action_names_are_the_yaml_names() {
        for action in Action::all() {
            assert_eq!(serde_json::to_value(action).unwrap(), action.name());
            let back: Action = serde_json::from_value(serde_json::json!(action.name())).unwrap();
            assert_eq!(back, action);
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
        assert_eq!(parsed.s3.unwrap().value.secret_key, "[redacted]");
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
