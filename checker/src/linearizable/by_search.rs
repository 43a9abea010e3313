//! A partition decided by the search: the verdict, and for a violation the explanation and
//! the shortest illegal prefix confirmed by searching prefixes.

use super::{
    key_prefix, Explanation, LinearizedStep, PartitionResult, Procedure, Unexplored, MAX_STEPS,
};
use crate::history::Operation;
use crate::model::{Built, CheckError, SeqModel};
use crate::search::{search, Limits, SearchEnd};
use crate::Verdict;
use std::time::Instant;

pub(super) fn run<M: SeqModel>(
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
    let op = Operation::clone(ops[i]);
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

fn explanation<M: SeqModel>(
    key: &Option<String>,
    ops: &[&Operation],
    built: &Built<M>,
    stuck: usize,
    best: &[(usize, M::State)],
    stuck_states: &[M::State],
    blockers: &[(usize, M::State)],
) -> Explanation {
    let summary = |i: usize| Operation::clone(ops[built.ops[i].src]);
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
                op: Operation::clone(ops[built.ops[*i].src]),
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
