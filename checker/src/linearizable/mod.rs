//! The linearizability checker: split by key (P-compositionality), decide each partition
//! (in parallel) from the reads-from relation when written values are unique (`unique/`),
//! by search otherwise (`search.rs`), and explain each violation.

use crate::history::{show, History, Operation, Status};
use crate::model::{Built, CheckError, Kv, ModelKind, Register, S3Object, SeqModel, SetModel};
use crate::search::{search, Limits, SearchEnd};
use crate::Verdict;
use serde::Serialize;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

/// The procedure that decided a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Procedure {
    /// Wing & Gong / Lowe's search (`search.rs`).
    Search,
    /// Unique written values: the read-from relation decides without search (`unique/`).
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

/// An operation as an explanation shows it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct OpSummary {
    /// Id in `History::ops`.
    pub id: usize,
    pub process: u64,
    pub f: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub value: Value,
    pub status: Status,
    pub output: Value,
    /// Event positions of the invocation and completion.
    pub invoke: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete: Option<usize>,
    pub invoke_time: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete_time: Option<u64>,
    /// 1-based line in the history file (0 if not read from a file).
    pub line: usize,
    /// What the client said of a fail or info (`already exists (call 12 sent again)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The node the operation went to, when the history says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl OpSummary {
    pub fn of(op: &Operation) -> OpSummary {
        OpSummary {
            id: op.id,
            process: op.process,
            f: op.f.clone(),
            key: op.key.clone(),
            value: op.value.clone(),
            status: op.status,
            output: op.output.clone(),
            invoke: op.invoke,
            complete: op.complete,
            invoke_time: op.invoke_time,
            complete_time: op.complete_time,
            line: op.line,
            error: op.error.clone(),
            node: op.node.clone(),
        }
    }

    /// `read -> 3` / `write 4` / `cas [1 2] -> ok`. A long array (a set read) shows its
    /// first elements and its length.
    pub fn describe(&self) -> String {
        let arg = if self.value.is_null() {
            String::new()
        } else {
            format!(" {}", show_short(&self.value))
        };
        let res = match self.status {
            Status::Ok if !self.output.is_null() && self.output != self.value => {
                format!(" -> {}", show_short(&self.output))
            }
            Status::Ok => String::new(),
            Status::Fail => " (fail)".into(),
            Status::Info => " (outcome unknown)".into(),
        };
        format!("{}{arg}{res}", self.f)
    }

    /// `op #12, process 3, line 40`.
    pub fn locate(&self) -> String {
        if self.line > 0 {
            format!(
                "op #{}, process {}, line {}",
                self.id, self.process, self.line
            )
        } else {
            format!("op #{}, process {}", self.id, self.process)
        }
    }
}

/// Elements of an array shown by [`OpSummary::describe`].
const SHOW_ITEMS: usize = 16;

fn show_short(v: &Value) -> String {
    match v {
        Value::Array(a) if a.len() > SHOW_ITEMS => {
            let items: Vec<String> = a[..SHOW_ITEMS].iter().map(|x| x.to_string()).collect();
            format!("[{},... ({} elements)]", items.join(","), a.len())
        }
        v => show(v),
    }
}

/// One step of a partial linearization.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinearizedStep {
    pub op: OpSummary,
    /// Model state after the operation.
    pub state: String,
}

/// Why a partition is not linearizable.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Explanation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// One sentence for people.
    pub message: String,
    /// The operation that cannot be placed.
    pub op: OpSummary,
    /// The model state it would need.
    pub needs: String,
    /// The states the model could be in when it had to take effect.
    pub states: Vec<String>,
    /// The operation whose (unavoidable) effect ruled it out, when that is
    /// another one: a write that had completed before a stale read began.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<OpSummary>,
    /// The shortest illegal prefix by completion ends with this event (inclusive).
    pub prefix_end_event: usize,
    /// Operations invoked within that prefix.
    pub prefix_ops: usize,
    /// Whether the prefix was confirmed illegal by a search of the truncated history.
    pub prefix_confirmed: bool,
    /// The longest partial linearization found: its last steps (at most
    /// [`MAX_STEPS`]; the earlier ones are only counted in `linearized`).
    pub longest_linearization: Vec<LinearizedStep>,
    /// How many operations that linearization places.
    pub linearized: usize,
}

/// Steps of a partial linearization kept in an explanation (the last ones).
pub const MAX_STEPS: usize = 1000;

/// What an undecided partition explored.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Unexplored {
    pub reason: String,
    /// Operations in the longest partial linearization found, out of `operations`.
    pub longest_linearization: usize,
}

/// The verdict for one key.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PartitionResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub verdict: Verdict,
    /// Which procedure decided it.
    pub procedure: Procedure,
    /// Operations searched (after dropping failed ones and unobservable unknown ones).
    pub operations: usize,
    pub states_explored: u64,
    pub elapsed_ms: f64,
    /// Peak bytes of the visited-state cache (an estimate).
    pub memory_bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<Unexplored>,
}

/// The result of a linearizability check.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinearizabilityResult {
    pub verdict: Verdict,
    pub model: ModelKind,
    /// Operations in the history.
    pub operations: usize,
    pub states_explored: u64,
    pub elapsed_ms: f64,
    /// Illegal partitions first, then unknown, then ok (each in key order).
    pub partitions: Vec<PartitionResult>,
}

impl LinearizabilityResult {
    /// The first violation, if any.
    pub fn explanation(&self) -> Option<&Explanation> {
        self.partitions.iter().find_map(|p| p.explanation.as_ref())
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

fn run<M: SeqModel>(
    build: impl Fn(&[&Operation], usize) -> Result<Built<M>, CheckError>,
    key: Option<String>,
    ops: &[&Operation],
    limits: &Limits,
    explain: bool,
) -> Result<PartitionResult, CheckError> {
    let start = Instant::now();
    let mut built = build(ops, usize::MAX)?;
    let mut result = PartitionResult {
        key: key.clone(),
        verdict: Verdict::Ok,
        procedure: Procedure::Search,
        operations: built.ops.len(),
        states_explored: 0,
        elapsed_ms: 0.0,
        memory_bytes: 0,
        explanation: None,
        unknown: None,
    };
    if let Some((i, why)) = built.immediate.take() {
        result.verdict = Verdict::Illegal;
        result.explanation = Some(immediate(&key, ops, &mut built, i, &why, limits, explain));
        result.elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
        return Ok(result);
    }
    match search(&mut built.model, &built.ops, limits, None) {
        SearchEnd::Ok { states, memory } => {
            result.states_explored = states;
            result.memory_bytes = memory;
        }
        SearchEnd::Unknown {
            reason,
            best,
            states,
            memory,
        } => {
            result.verdict = Verdict::Unknown;
            result.states_explored = states;
            result.memory_bytes = memory;
            result.unknown = Some(Unexplored {
                reason,
                longest_linearization: best.len(),
            });
        }
        SearchEnd::Illegal {
            stuck,
            best,
            stuck_states,
            blockers,
            exact,
            illegal_by,
            states,
            memory,
        } => {
            result.verdict = Verdict::Illegal;
            result.states_explored = states;
            result.memory_bytes = memory;
            let confirmed = if explain && !exact {
                confirm_prefix(&mut built, Some(stuck), limits, illegal_by)
            } else {
                None
            };
            result.explanation = Some(match confirmed {
                Some(c) => confirmed_explanation(&key, ops, &built, c),
                None => {
                    let mut e =
                        explanation(&key, ops, &built, stuck, &best, &stuck_states, &blockers);
                    e.prefix_confirmed = exact;
                    e
                }
            });
        }
    }
    result.elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(result)
}

/// The explanation of a violation the model found without search (a read of a value nobody
/// wrote), unless a search finds a shorter illegal prefix first.
fn immediate<M: SeqModel>(
    key: &Option<String>,
    ops: &[&Operation],
    built: &mut Built<M>,
    i: usize,
    why: &str,
    limits: &Limits,
    explain: bool,
) -> Explanation {
    // Something else may already be illegal in a shorter prefix.
    let shorter = match built.ops.iter().position(|o| o.src == i) {
        Some(k) if explain => {
            let at = built.ops[k].ret;
            confirm_prefix(built, None, limits, Some(at))
        }
        _ => None,
    };
    if let Some(c) = shorter {
        return confirmed_explanation(key, ops, built, c);
    }
    let op = OpSummary::of(ops[i]);
    let end = op.complete.unwrap_or(op.invoke);
    Explanation {
        key: key.clone(),
        message: format!(
            "{}{} ({}): {why}",
            key_prefix(key),
            op.describe(),
            op.locate()
        ),
        needs: "a value that was written".into(),
        states: Vec::new(),
        prefix_end_event: end,
        prefix_ops: ops.iter().filter(|o| o.invoke <= end).count(),
        prefix_confirmed: explain,
        after: None,
        longest_linearization: Vec::new(),
        linearized: 0,
        op,
    }
}

/// The explanation from a search of the shortest illegal prefix, which ends with event `cut`.
fn confirmed_explanation<M: SeqModel>(
    key: &Option<String>,
    ops: &[&Operation],
    built: &Built<M>,
    (stuck, best, stuck_states, blockers, cut): Confirmed<M::State>,
) -> Explanation {
    let mut e = explanation(key, ops, built, stuck, &best, &stuck_states, &blockers);
    e.prefix_confirmed = true;
    e.prefix_end_event = cut;
    e.prefix_ops = ops.iter().filter(|o| o.invoke <= cut).count();
    e
}

pub(crate) fn key_prefix(key: &Option<String>) -> String {
    match key {
        Some(k) => format!("key {k}: "),
        None => String::new(),
    }
}

fn explanation<M: SeqModel>(
    key: &Option<String>,
    ops: &[&Operation],
    built: &Built<M>,
    stuck: usize,
    best: &[(usize, M::State)],
    stuck_states: &[M::State],
    blockers: &[(usize, M::State)],
) -> Explanation {
    let summary = |i: usize| OpSummary::of(ops[built.ops[i].src]);
    let show_all = |v: &mut dyn Iterator<Item = &M::State>| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in v {
            let s = built.model.show_state(s);
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    };
    // When the operation that could not be placed is always legal itself (a
    // write), the one to show is the observation its placement made impossible.
    let (victim, after, states) = match blockers.first() {
        Some(&(g, _)) => (
            g,
            Some(summary(stuck)),
            show_all(&mut blockers.iter().filter(|b| b.0 == g).map(|b| &b.1)),
        ),
        None => (stuck, None, show_all(&mut stuck_states.iter())),
    };
    let op = summary(victim);
    let end = op
        .complete
        .unwrap_or(op.invoke)
        .max(summary(stuck).complete.unwrap_or(0));
    let needs = built.model.needs(victim);
    let could = match (&after, states.is_empty()) {
        (_, true) => String::new(),
        (Some(a), false) => format!(
            ", but once {} ({}) had taken effect the state could only be {}",
            a.describe(),
            a.locate(),
            states.join(" or ")
        ),
        (None, false) => format!("; by then the state could only be {}", states.join(" or ")),
    };
    let message = format!(
        "{}{} ({}) cannot be linearized: it needs {}{}",
        key_prefix(key),
        op.describe(),
        op.locate(),
        needs,
        could
    );
    Explanation {
        key: key.clone(),
        message,
        op,
        needs,
        states,
        prefix_end_event: end,
        prefix_ops: ops.iter().filter(|o| o.invoke <= end).count(),
        prefix_confirmed: false,
        after,
        linearized: best.len(),
        longest_linearization: best[best.len().saturating_sub(MAX_STEPS)..]
            .iter()
            .map(|(i, s)| LinearizedStep {
                op: OpSummary::of(ops[built.ops[*i].src]),
                state: built.model.show_state(s),
            })
            .collect(),
    }
}

type Confirmed<S> = (usize, Vec<(usize, S)>, Vec<S>, Vec<(usize, S)>, usize);
/// An illegal cut index and its search (none for the one given at the start).
type Known<S> = (usize, Option<Confirmed<S>>);

/// Pruning may stop a search before it reaches the true frontier, so prefixes
/// of the history are searched on their own: the prefix ending at the stuck
/// operation's completion first, then further cuts, galloping and then
/// bisecting, until the shortest illegal one is pinned down. A prefix search
/// whose own answer is exact ends it at once.
/// Returns the illegal prefix's search (stuck op, best path, states, blockers, cut).
///
/// The compiled model serves the prefix too: values and operations it merged or
/// dropped as unobservable in the whole history are unobservable in a prefix.
fn confirm_prefix<M: SeqModel>(
    built: &mut Built<M>,
    from: Option<usize>,
    limits: &Limits,
    illegal_by: Option<u32>,
) -> Option<Confirmed<M::State>> {
    let mut cuts: Vec<u32> = built
        .ops
        .iter()
        .filter(|o| !o.info())
        .map(|o| o.ret)
        .collect();
    cuts.sort_unstable();
    // Every prefix before `lo` is legal; `hi` is the shortest known illegal one
    // (with its search, unless it is the given one).
    let mut lo = from
        .and_then(|f| cuts.binary_search(&built.ops[f].ret).ok())
        .unwrap_or(0);
    let mut hi: Option<Known<M::State>> = illegal_by
        .and_then(|at| cuts.binary_search(&at).ok())
        .map(|h| (h, None));
    if hi.as_ref().is_some_and(|(h, _)| *h < lo) {
        hi = None;
    }
    let mut step = 1;
    while hi.as_ref().is_none_or(|(h, _)| lo < *h) {
        let probe = match &hi {
            None => (lo + step - 1).min(cuts.len() - 1),
            Some((h, _)) => lo + (h - lo) / 2,
        };
        step *= 2;
        let cut = cuts[probe];
        let outcome = search_cut(built, cut, limits);
        match outcome {
            SearchEnd::Illegal {
                stuck,
                best,
                stuck_states,
                blockers,
                exact,
                ..
            } => {
                let end = built.ops[stuck].ret;
                if exact {
                    return Some((stuck, best, stuck_states, blockers, end as usize));
                }
                hi = Some((
                    probe,
                    Some((stuck, best, stuck_states, blockers, cut as usize)),
                ));
            }
            SearchEnd::Ok { .. } => {
                lo = probe + 1;
                if lo >= cuts.len() {
                    return None;
                }
            }
            SearchEnd::Unknown { .. } => return None,
        }
    }
    match hi {
        Some((_, Some(c))) => Some(c),
        // The given illegal cut is the shortest: search it for its story.
        Some((h, None)) => match search_cut(built, cuts[h], limits) {
            SearchEnd::Illegal {
                stuck,
                best,
                stuck_states,
                blockers,
                ..
            } => Some((stuck, best, stuck_states, blockers, cuts[h] as usize)),
            _ => None,
        },
        None => None,
    }
}

/// Searches the prefix ending with event `cut`, with operations that complete
/// later treated as still in flight.
fn search_cut<M: SeqModel>(built: &mut Built<M>, cut: u32, limits: &Limits) -> SearchEnd<M::State> {
    let pending: Vec<usize> = (0..built.ops.len())
        .filter(|&i| {
            let o = &built.ops[i];
            o.call <= cut && !o.info() && !o.failed && o.ret > cut
        })
        .collect();
    for &i in &pending {
        built.model.set_pending(i, true);
    }
    let outcome = search(&mut built.model, &built.ops, limits, Some(cut));
    for &i in &pending {
        built.model.set_pending(i, false);
    }
    outcome
}

/// A short human-readable account of a result, for the CLI and JUnit messages.
pub fn render(r: &LinearizabilityResult) -> String {
    let keys = r.partitions.len();
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    match r.verdict {
        Verdict::Ok => {
            let fast = r
                .partitions
                .iter()
                .filter(|p| p.procedure == Procedure::ReadsFrom)
                .count();
            format!(
                "linearizable ({}): {}, {}{}, {} states explored in {:.1} ms",
                r.model,
                plural(r.operations, "operation"),
                plural(keys, "key"),
                if fast > 0 {
                    format!(" ({fast} decided from the reads-from relation)")
                } else {
                    String::new()
                },
                r.states_explored,
                r.elapsed_ms
            )
        }
        Verdict::Illegal => {
            let bad: Vec<&PartitionResult> = r
                .partitions
                .iter()
                .filter(|p| p.verdict == Verdict::Illegal)
                .collect();
            let mut out = format!(
                "NOT linearizable ({}): {} of {} illegal",
                r.model,
                plural(bad.len(), "key"),
                keys
            );
            for p in bad.iter().take(3) {
                if let Some(e) = &p.explanation {
                    out.push_str("\n  ");
                    out.push_str(&e.message);
                    out.push_str(&format!(
                        "\n    longest linearization: {} of {} operations{}",
                        e.linearized,
                        p.operations,
                        e.longest_linearization
                            .last()
                            .map(|s| format!(
                                ", ending with {} ({}) -> state {}",
                                s.op.describe(),
                                s.op.locate(),
                                s.state
                            ))
                            .unwrap_or_default()
                    ));
                }
            }
            if bad.len() > 3 {
                out.push_str(&format!("\n  ... and {} more", bad.len() - 3));
            }
            out
        }
        Verdict::Unknown => {
            let mut out = format!("undecided ({}): the budget ran out", r.model);
            for p in r
                .partitions
                .iter()
                .filter(|p| p.verdict == Verdict::Unknown)
            {
                if let Some(u) = &p.unknown {
                    out.push_str(&format!(
                        "\n  {}{} after {} states; longest linearization {} of {} operations",
                        key_prefix(&p.key),
                        u.reason,
                        p.states_explored,
                        u.longest_linearization,
                        p.operations
                    ));
                }
            }
            out
        }
    }
}
