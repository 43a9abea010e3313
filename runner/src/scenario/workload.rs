//! The workload section of a scenario: its kind, shape and the per-kind sections.

use super::*;

/// A workload kind is a type of the workloads module (its registry says what each does).
pub use crate::workloads::WorkloadKind;

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
    #[serde(default = "default_keys", deserialize_with = "key_count")]
    pub keys: u32,
    #[serde(default = "default_processes", deserialize_with = "process_count")]
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
    /// The workload lasts at least `by` past the end of fault step `step` (applied, undone,
    /// its nodes answering again), however long that takes on this machine.
    #[serde(default, rename = "lasts-past")]
    pub lasts_past: Option<Spanned<LastsPast>>,
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

/// `lasts-past: { step: 3, by: 75s }`.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LastsPast {
    pub step: usize,
    pub by: Dur,
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

/// The most processes a workload runs (each a task with its own client and connections).
pub const MAX_PROCESSES: u32 = 10_000;
/// The most keys a workload spreads over (the final reads read every one).
pub const MAX_KEYS: u32 = 100_000;

/// A count from 1 to `max` (`processes`, `keys`), refused where it is written, with the
/// range it must be in (`-1` and `4294967296` too, which no u32 holds).
fn count_in<'de, D: Deserializer<'de>>(deserializer: D, max: u32) -> Result<u32, D::Error> {
    struct Count(u32);
    impl Visitor<'_> for Count {
        type Value = u32;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "a whole number from 1 to {}", self.0)
        }
        fn visit_u64<E: de::Error>(self, n: u64) -> Result<u32, E> {
            match u32::try_from(n) {
                Ok(0) => Err(E::custom("needs at least 1 (found 0)")),
                Ok(n) if n <= self.0 => Ok(n),
                _ => Err(E::custom(format!("at most {} (found {n})", self.0))),
            }
        }
        fn visit_i64<E: de::Error>(self, n: i64) -> Result<u32, E> {
            match u64::try_from(n) {
                Ok(n) => self.visit_u64(n),
                Err(_) => Err(E::custom(format!(
                    "needs a whole number from 1 to {} (found {n})",
                    self.0
                ))),
            }
        }
        /// `keys: "5"` reads as 5, as it did when the field was a plain number.
        fn visit_str<E: de::Error>(self, text: &str) -> Result<u32, E> {
            let text = text.trim();
            if let Ok(n) = text.parse::<u64>() {
                return self.visit_u64(n);
            }
            if let Ok(n) = text.parse::<i64>() {
                return self.visit_i64(n);
            }
            Err(E::custom(format!(
                "needs a whole number from 1 to {} (found {})",
                self.0,
                chaos_core::shown::shown(text)
            )))
        }
        fn visit_f64<E: de::Error>(self, n: f64) -> Result<u32, E> {
            Err(E::custom(format!(
                "needs a whole number from 1 to {} (found {n})",
                self.0
            )))
        }
        fn visit_u128<E: de::Error>(self, n: u128) -> Result<u32, E> {
            Err(E::custom(format!("at most {} (found {n})", self.0)))
        }
        fn visit_i128<E: de::Error>(self, n: i128) -> Result<u32, E> {
            match u64::try_from(n) {
                Ok(n) => self.visit_u64(n),
                Err(_) => Err(E::custom(format!(
                    "needs a whole number from 1 to {} (found {n})",
                    self.0
                ))),
            }
        }
    }
    deserializer.deserialize_any(Count(max))
}

fn key_count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    count_in(deserializer, MAX_KEYS)
}

fn process_count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    count_in(deserializer, MAX_PROCESSES)
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
