//! The linearizability checker: split by key (P-compositionality), decide each partition
//! (in parallel) from the reads-from relation when written values are unique (`unique/`),
//! by search otherwise (`search.rs`, driven by `by_search.rs`), and explain each violation.
//! `answer.rs` (beside it, as the reads-from procedure shares it) holds what a check answers.

use crate::history::{History, Operation};
use crate::model::{CheckError, Kv, ModelKind, Register, S3Object, SetModel};
use crate::search::Limits;
use crate::Verdict;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod by_search;

pub(crate) use crate::answer::key_prefix;
pub use crate::answer::{
    render, Explanation, LinearizabilityResult, LinearizedStep, PartitionResult, Procedure,
    Unexplored, MAX_STEPS,
};
use by_search::run;

/// How much a check may spend before it answers `unknown`.
#[derive(Clone, Debug)]
pub struct Budget {
    /// Wall-clock limit for the whole check.
    pub timeout: Duration,
    /// Cap on the visited-state caches of all partitions searched at once (bytes).
    pub max_memory: usize,
    /// Worker threads for partitions; 0 = the machine's parallelism.
    pub threads: usize,
    /// Confirm the shortest illegal prefix of each illegal partition (one more
    /// search on the truncated partition).
    pub explain: bool,
    /// Which procedure decides a partition.
    pub route: Route,
}

/// Which procedure decides a partition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Route {
    /// The reads-from procedure when its preconditions hold (unique written values), the
    /// search otherwise.
    #[default]
    Auto,
    /// Always the search.
    Search,
    /// Only the reads-from procedure: a partition it cannot take is `unknown`, with the
    /// precondition that failed as the reason.
    ReadsFrom,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            timeout: Duration::from_secs(60),
            max_memory: 2 << 30,
            threads: 0,
            explain: true,
            route: Route::Auto,
        }
    }
}

impl Budget {
    pub fn with_timeout(timeout: Duration) -> Budget {
        Budget {
            timeout,
            ..Budget::default()
        }
    }
}

/// Checks that `history` is linearizable with respect to `model`, key by key.
///
/// Bad input for the model (an unknown operation, a malformed cas) is an error,
/// not a verdict.
pub fn check(
    history: &History,
    model: ModelKind,
    budget: &Budget,
) -> Result<LinearizabilityResult, CheckError> {
    let start = Instant::now();
    let stop = AtomicBool::new(false);
    let mut groups = history.by_key();
    for (_, ops) in groups.iter_mut() {
        ops.retain(|op| op.f != crate::history::RESEND);
    }
    groups.retain(|(_, ops)| !ops.is_empty());
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    let total: usize = groups.iter().map(|g| g.1.len()).sum();
    // Spawning costs tens of microseconds (and asking for the parallelism reads
    // cgroup files): only worth it for real work.
    let threads = if total < 2_000 || groups.len() < 2 {
        1
    } else {
        match budget.threads {
            0 => std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            t => t,
        }
        .min(groups.len())
        .max(1)
    };
    let limits = Limits {
        deadline: start + budget.timeout,
        max_memory: budget.max_memory / threads,
        stop: &stop,
    };

    let mut results: Vec<Option<Result<PartitionResult, CheckError>>> = vec![None; groups.len()];
    if threads == 1 {
        for (i, (key, ops)) in groups.iter().enumerate() {
            results[i] = Some(check_partition(key.clone(), ops, model, &limits, budget));
        }
    } else {
        // Largest partitions first, so the last one to finish is small.
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(groups[i].1.len()));
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<PartitionResult, CheckError>>>> =
            (0..groups.len()).map(|_| Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = order.get(k) else { break };
                    let (key, ops) = &groups[i];
                    let r = check_partition(key.clone(), ops, model, &limits, budget);
                    if let Ok(mut slot) = slots[i].lock() {
                        *slot = Some(r);
                    }
                });
            }
        });
        for (i, slot) in slots.into_iter().enumerate() {
            results[i] = slot.into_inner().ok().flatten();
        }
    }
    let mut partitions = Vec::with_capacity(results.len());
    for r in results {
        match r {
            Some(Ok(p)) => partitions.push(p),
            Some(Err(e)) => return Err(e),
            None => {
                return Err(CheckError {
                    op: 0,
                    line: 0,
                    message: "a partition worker failed".into(),
                })
            }
        }
    }
    let verdict = if partitions.iter().any(|p| p.verdict == Verdict::Illegal) {
        Verdict::Illegal
    } else if partitions.iter().any(|p| p.verdict == Verdict::Unknown) {
        Verdict::Unknown
    } else {
        Verdict::Ok
    };
    partitions.sort_by_key(|p| match p.verdict {
        Verdict::Illegal => 0,
        Verdict::Unknown => 1,
        Verdict::Ok => 2,
    });
    Ok(LinearizabilityResult {
        verdict,
        model,
        operations: history.ops.len(),
        states_explored: partitions.iter().map(|p| p.states_explored).sum(),
        elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
        partitions,
    })
}

fn check_partition(
    key: Option<String>,
    ops: &[&Operation],
    model: ModelKind,
    limits: &Limits,
    budget: &Budget,
) -> Result<PartitionResult, CheckError> {
    let explain = budget.explain;
    if budget.route != Route::Search {
        let start = Instant::now();
        match crate::unique::check(&key, ops, model, limits) {
            Ok(r) => return Ok(r),
            Err(why) if budget.route == Route::ReadsFrom => {
                return Ok(PartitionResult {
                    key,
                    verdict: Verdict::Unknown,
                    procedure: Procedure::ReadsFrom,
                    operations: ops.len(),
                    states_explored: 0,
                    elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
                    memory_bytes: 0,
                    explanation: None,
                    unknown: Some(Unexplored {
                        reason: format!("the reads-from procedure does not apply: {why}"),
                        longest_linearization: 0,
                    }),
                })
            }
            Err(_) => {}
        }
    }
    match model {
        ModelKind::Register => run(
            |o, c| Register::build(o, c, false),
            key,
            ops,
            limits,
            explain,
        ),
        ModelKind::CasRegister => run(
            |o, c| Register::build(o, c, true),
            key,
            ops,
            limits,
            explain,
        ),
        ModelKind::Kv => run(Kv::build, key, ops, limits, explain),
        ModelKind::Set => run(SetModel::build, key, ops, limits, explain),
        ModelKind::S3Object => run(S3Object::build, key, ops, limits, explain),
    }
}
