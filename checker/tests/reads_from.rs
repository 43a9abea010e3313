//! The reads-from procedure (unique written values, no search) against the search and, for
//! the smallest histories, against brute force:
//!
//! * random histories with unique written values and arbitrary real-time intervals, where
//!   reads return any written value (or one nobody wrote), so most are illegal in some
//!   tangled way; sets whose reads return the adds begun before some point of their
//!   interval, now and then with one missing or one nobody added;
//! * histories from `checker::generate`: a linearizable store with many processes and info
//!   operations, with and without a stale read or a lost write at a known point.
//!
//! The verdicts must agree, and the shortest illegal prefix each procedure confirms must be
//! the same event. `PROPTEST_CASES` runs more.

mod common;

use checker::generate::{generate, Fault, Spec};
use checker::history::{Event, EventType, History};
use checker::linearizable::{check, Budget, LinearizabilityResult, Route};
use checker::{ModelKind, Procedure, Verdict};
use common::brute_force;
use proptest::prelude::*;
use serde_json::{json, Value};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(400)
}

fn run(h: &History, model: ModelKind, route: Route) -> LinearizabilityResult {
    let budget = Budget {
        route,
        ..Budget::default()
    };
    check(h, model, &budget).expect("check")
}

fn dump(h: &History) -> String {
    h.events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Both procedures decide; the verdicts agree (and with brute force when small); the
/// reads-from explanation is complete and its shortest illegal prefix is the search's.
fn agree(h: &History, model: ModelKind, expected: Option<Verdict>) -> Result<(), TestCaseError> {
    let fast = run(h, model, Route::ReadsFrom);
    let slow = run(h, model, Route::Search);
    for p in &fast.partitions {
        prop_assert_eq!(p.procedure, Procedure::ReadsFrom);
        prop_assert!(
            p.verdict != Verdict::Unknown,
            "reads-from did not apply: {:?}\n{}",
            p.unknown,
            dump(h)
        );
    }
    prop_assert!(slow.verdict != Verdict::Unknown);
    prop_assert_eq!(fast.verdict, slow.verdict, "history:\n{}", dump(h));
    if let Some(e) = expected {
        prop_assert_eq!(fast.verdict, e, "history:\n{}", dump(h));
    }
    if h.ops.len() <= 8 {
        let bf = if brute_force(model, h) {
            Verdict::Ok
        } else {
            Verdict::Illegal
        };
        prop_assert_eq!(fast.verdict, bf, "history:\n{}", dump(h));
    }
    if fast.verdict == Verdict::Illegal {
        for (pf, ps) in fast
            .partitions
            .iter()
            .filter(|p| p.verdict == Verdict::Illegal)
            .zip(
                slow.partitions
                    .iter()
                    .filter(|p| p.verdict == Verdict::Illegal),
            )
        {
            prop_assert_eq!(&pf.key, &ps.key);
            let ef = pf.explanation.as_ref().expect("an explanation");
            let es = ps.explanation.as_ref().expect("an explanation");
            prop_assert!(ef.prefix_confirmed);
            prop_assert!(
                ef.message.contains("cannot be linearized"),
                "{}",
                ef.message
            );
            prop_assert!(ef.message.contains(&ef.op.describe()), "{}", ef.message);
            // The operation named completes the shortest illegal prefix.
            // (or, when a failed write completes it, the operation that saw its value).
            prop_assert!(
                ef.op.complete == Some(ef.prefix_end_event) || ef.message.contains("failed"),
                "{}",
                ef.message
            );
            if es.prefix_confirmed {
                prop_assert_eq!(
                    ef.prefix_end_event,
                    es.prefix_end_event,
                    "search: {}\nreads-from: {}\n{}",
                    es.message,
                    ef.message,
                    dump(h)
                );
            }
        }
    }
    Ok(())
}

/// One operation of a random history: (kind, value choice, start, length, outcome).
type Act = (u8, u8, u8, u8, u8);

/// Operations with arbitrary intervals, one process each, unique written values; reads
/// return some written value, the initial one, or (rarely) one nobody wrote.
fn random_history(model: ModelKind, acts: &[Act]) -> History {
    let n = acts.len();
    let mut written: Vec<Value> = Vec::new();
    // kv: puts and appends written so far (pieces are prefix-free: `p3;` `a7;`).
    let mut puts: Vec<String> = Vec::new();
    let mut appends: Vec<String> = Vec::new();
    let mut timed: Vec<(u32, Event)> = Vec::new();
    for (i, &(k, v, start, len, outcome)) in acts.iter().enumerate() {
        let t0 = start as u32 * 64 + i as u32;
        let t1 = (start as u32 + 1 + len as u32 % 64) * 64 + i as u32 + 32;
        let value = i as u64 + 1;
        let pick = |v: u8, from: &[Value]| -> Value {
            match v as usize % (from.len() + 2) {
                0 => Value::Null,
                x if x == from.len() + 1 => {
                    if v > 250 {
                        json!(999)
                    } else {
                        Value::Null
                    }
                }
                x => from[from.len() - x].clone(),
            }
        };
        let (f, input, output): (&str, Value, Value) = match model {
            ModelKind::Kv => match k % 3 {
                0 => {
                    // A root, then some appends in some order.
                    let mut s = String::new();
                    if !puts.is_empty() && v % 3 != 0 {
                        s.push_str(&puts[v as usize % puts.len()]);
                    }
                    let mut pool = appends.clone();
                    let mut r = v as usize / 3;
                    for _ in 0..(len as usize % 4) {
                        if pool.is_empty() {
                            break;
                        }
                        let a = pool.remove(r % pool.len());
                        r = r / 2 + 1;
                        s.push_str(&a);
                    }
                    if v > 252 {
                        s.push_str("zz");
                    }
                    ("get", Value::Null, json!(s))
                }
                1 => {
                    let p = format!("p{value};");
                    puts.push(p.clone());
                    ("put", json!(p), json!(p))
                }
                _ => {
                    let a = format!("a{value};");
                    appends.push(a.clone());
                    ("append", json!(a), json!(a))
                }
            },
            _ => match k % if model == ModelKind::CasRegister {
                3
            } else {
                2
            } {
                0 => ("read", Value::Null, pick(v, &written)),
                1 => {
                    written.push(json!(value));
                    ("write", json!(value), json!(value))
                }
                _ => {
                    let expected = pick(v, &written);
                    written.push(json!(value));
                    let c = json!([expected, value]);
                    ("cas", c.clone(), c)
                }
            },
        };
        let reader = matches!(f, "read" | "get");
        let key = if model == ModelKind::Kv && k % 7 == 6 {
            "y"
        } else {
            "x"
        };
        let p = i as u64;
        timed.push((t0, Event::new(p, EventType::Invoke, f, Some(key), input)));
        // Outcome: mostly ok; reads may end info; writes fail, end info, or never end.
        let end = match outcome % 10 {
            0..=6 => Some((EventType::Ok, output)),
            7 if !reader => Some((EventType::Fail, Value::Null)),
            8 => Some((EventType::Info, Value::Null)),
            _ if reader => Some((EventType::Ok, output)),
            _ => None,
        };
        if let Some((kind, out)) = end {
            let out = if kind == EventType::Fail && f == "cas" {
                timed.last().unwrap().1.value.clone()
            } else {
                out
            };
            timed.push((t1, Event::new(p, kind, f, Some(key), out)));
        }
    }
    let _ = n;
    timed.sort_by_key(|(t, _)| *t);
    let events: Vec<Event> = timed
        .into_iter()
        .enumerate()
        .map(|(i, (t, mut e))| {
            e.index = i as u64;
            e.time = t as u64;
            e
        })
        .collect();
    History::from_events(events).expect("well formed")
}

/// Sets: adds of unique elements; a read returns the adds that began before a random point
/// of its interval (a legal answer, were the adds instantaneous), now and then with one
/// element dropped, or one nobody added.
fn random_set_history(acts: &[Act]) -> History {
    let time = |i: usize, start: u8, len: u8| {
        let t0 = start as u32 * 64 + i as u32;
        (
            t0,
            (start as u32 + 1 + len as u32 % 64) * 64 + i as u32 + 32,
        )
    };
    let adds: Vec<(u32, u64)> = acts
        .iter()
        .enumerate()
        .filter(|(_, a)| a.0 % 3 != 0)
        .map(|(i, a)| (time(i, a.2, a.3).0, i as u64 + 1))
        .collect();
    let mut timed: Vec<(u32, Event)> = Vec::new();
    for (i, &(k, v, start, len, outcome)) in acts.iter().enumerate() {
        let (t0, t1) = time(i, start, len);
        let p = i as u64;
        if k % 3 != 0 {
            let e = json!(i as u64 + 1);
            timed.push((
                t0,
                Event::new(p, EventType::Invoke, "add", Some("s"), e.clone()),
            ));
            let end = match outcome % 10 {
                0..=6 => Some((EventType::Ok, e)),
                7 => Some((EventType::Fail, Value::Null)),
                8 => Some((EventType::Info, Value::Null)),
                _ => None,
            };
            if let Some((kind, out)) = end {
                timed.push((t1, Event::new(p, kind, "add", Some("s"), out)));
            }
        } else {
            let point = t0 + (t1 - t0) * (v as u32 % 16) / 16;
            let mut set: Vec<u64> = adds
                .iter()
                .filter(|(t, _)| *t < point)
                .map(|(_, e)| *e)
                .collect();
            if v > 230 && !set.is_empty() {
                set.remove(v as usize % set.len());
            }
            if v < 8 {
                set.push(999);
            }
            set.reverse();
            timed.push((
                t0,
                Event::new(p, EventType::Invoke, "read", Some("s"), Value::Null),
            ));
            let kind = if outcome % 10 == 9 {
                EventType::Info
            } else {
                EventType::Ok
            };
            let out = if kind == EventType::Ok {
                json!(set)
            } else {
                Value::Null
            };
            timed.push((t1, Event::new(p, kind, "read", Some("s"), out)));
        }
    }
    timed.sort_by_key(|(t, _)| *t);
    let events: Vec<Event> = timed
        .into_iter()
        .enumerate()
        .map(|(i, (t, mut e))| {
            e.index = i as u64;
            e.time = t as u64;
            e
        })
        .collect();
    History::from_events(events).expect("well formed")
}

fn acts(max: usize) -> impl Strategy<Value = Vec<Act>> {
    prop::collection::vec(any::<Act>(), 1..max)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn register_random(a in acts(9)) {
        agree(&random_history(ModelKind::Register, &a), ModelKind::Register, None)?;
    }

    #[test]
    fn register_random_longer(a in acts(30)) {
        agree(&random_history(ModelKind::Register, &a), ModelKind::Register, None)?;
    }

    #[test]
    fn cas_register_random(a in acts(9)) {
        agree(&random_history(ModelKind::CasRegister, &a), ModelKind::CasRegister, None)?;
    }

    #[test]
    fn cas_register_random_longer(a in acts(30)) {
        agree(&random_history(ModelKind::CasRegister, &a), ModelKind::CasRegister, None)?;
    }

    #[test]
    fn kv_random(a in acts(9)) {
        agree(&random_history(ModelKind::Kv, &a), ModelKind::Kv, None)?;
    }

    #[test]
    fn kv_random_longer(a in acts(30)) {
        agree(&random_history(ModelKind::Kv, &a), ModelKind::Kv, None)?;
    }

    #[test]
    fn set_random(a in acts(9)) {
        agree(&random_set_history(&a), ModelKind::Set, None)?;
    }

    #[test]
    fn set_random_longer(a in acts(40)) {
        agree(&random_set_history(&a), ModelKind::Set, None)?;
    }

    #[test]
    fn generated(
        model in prop::sample::select(vec![ModelKind::Register, ModelKind::CasRegister, ModelKind::Kv, ModelKind::Set]),
        ops in 4usize..80,
        processes in 2usize..8,
        keys in 1usize..3,
        info in 0.0f64..0.4,
        fault in prop::sample::select(vec![Fault::None, Fault::StaleRead, Fault::LostWrite]),
        seed in any::<u64>(),
    ) {
        let spec = Spec { fault_at: 0.3, ..Spec::new(model, ops, processes, keys, info).fault(fault).seed(seed) };
        let g = generate(&spec);
        agree(&g.history, model, Some(g.expected))?;
        if let Some(w) = g.witness {
            // Up to the witness's completion the history is a linearizable store's: a stale
            // read is the operation named; a lost write shows at the latest there (any read
            // after it may show it, or a read of a value that had to precede it).
            let r = run(&g.history, model, Route::Auto);
            let e = r.explanation().expect("an explanation");
            let w = &g.history.ops[w];
            prop_assert!(e.prefix_end_event <= w.complete.unwrap());
            if fault == Fault::StaleRead {
                prop_assert_eq!(e.op.id, w.id, "{}\n{}", e.message, dump(&g.history));
                prop_assert!(e.after.is_some(), "{}", e.message);
            }
        }
    }
}

fn history(lines: &[(u64, EventType, &str, Value)]) -> History {
    let events = lines
        .iter()
        .enumerate()
        .map(|(i, (p, t, f, v))| {
            let mut e = Event::new(*p, *t, f, Some("k"), v.clone());
            e.index = i as u64;
            e.time = i as u64;
            e
        })
        .collect();
    History::from_events(events).unwrap()
}

/// A history that breaks a precondition goes to the search; a read nothing could produce is
/// illegal without it.
#[test]
fn preconditions_route_and_impossible_reads() {
    use EventType::*;
    let decided = |h: &History, model: ModelKind| {
        let r = run(h, model, Route::Auto);
        (r.verdict, r.partitions[0].procedure, r)
    };
    // A value written twice: the search (and it is linearizable).
    let h = history(&[
        (0, Invoke, "write", json!(1)),
        (0, Ok, "write", json!(1)),
        (1, Invoke, "write", json!(1)),
        (1, Ok, "write", json!(1)),
        (2, Invoke, "read", Value::Null),
        (2, Ok, "read", json!(1)),
    ]);
    let (v, p, _) = decided(&h, ModelKind::Register);
    assert_eq!((v, p), (Verdict::Ok, Procedure::Search));
    let r = run(&h, ModelKind::Register, Route::ReadsFrom);
    let why = r.partitions[0].unknown.as_ref().unwrap();
    assert!(
        why.reason.contains("a value written twice"),
        "{}",
        why.reason
    );
    // A write of nil, the initial value: the search.
    let h = history(&[
        (0, Invoke, "write", Value::Null),
        (0, Ok, "write", Value::Null),
    ]);
    assert_eq!(decided(&h, ModelKind::Register).1, Procedure::Search);
    // A read of a value nobody wrote: illegal, by reads-from, named.
    let h = history(&[
        (0, Invoke, "write", json!(1)),
        (0, Ok, "write", json!(1)),
        (1, Invoke, "read", Value::Null),
        (1, Ok, "read", json!(7)),
    ]);
    let (v, p, r) = decided(&h, ModelKind::Register);
    assert_eq!((v, p), (Verdict::Illegal, Procedure::ReadsFrom));
    let e = r.explanation().unwrap();
    assert!(
        e.message.contains("which no operation writes"),
        "{}",
        e.message
    );
    assert_eq!(e.op.output, json!(7));
    // A read of a value only a failed write wrote: illegal.
    let h = history(&[
        (0, Invoke, "write", json!(1)),
        (1, Invoke, "read", Value::Null),
        (1, Ok, "read", json!(1)),
        (0, Fail, "write", json!(1)),
    ]);
    let (v, p, r) = decided(&h, ModelKind::Register);
    assert_eq!((v, p), (Verdict::Illegal, Procedure::ReadsFrom));
    assert!(r.explanation().unwrap().message.contains("failed"));
    // kv: a piece that is a prefix of another: the search.
    let h = history(&[
        (0, Invoke, "append", json!("a")),
        (0, Ok, "append", json!("a")),
        (1, Invoke, "append", json!("ab")),
        (1, Ok, "append", json!("ab")),
        (2, Invoke, "get", Value::Null),
        (2, Ok, "get", json!("aab")),
    ]);
    assert_eq!(decided(&h, ModelKind::Kv).1, Procedure::Search);
    // kv: a get no puts and appends produce: illegal.
    let h = history(&[
        (0, Invoke, "append", json!("a;")),
        (0, Ok, "append", json!("a;")),
        (1, Invoke, "get", Value::Null),
        (1, Ok, "get", json!("a;z")),
    ]);
    let (v, p, r) = decided(&h, ModelKind::Kv);
    assert_eq!((v, p), (Verdict::Illegal, Procedure::ReadsFrom));
    assert!(r
        .explanation()
        .unwrap()
        .message
        .contains("no sequence of puts"));
    // set: an element added twice: the search.
    let h = history(&[
        (0, Invoke, "add", json!(1)),
        (0, Ok, "add", json!(1)),
        (1, Invoke, "add", json!(1)),
        (1, Ok, "add", json!(1)),
    ]);
    assert_eq!(decided(&h, ModelKind::Set).1, Procedure::Search);
    // Bad input is still an error, whichever procedure would have run.
    let h = history(&[(0, Invoke, "frob", json!(1)), (0, Ok, "frob", json!(1))]);
    assert!(check(&h, ModelKind::Register, &Budget::default()).is_err());
}

/// The stale read of the issue: the read, the write that overwrote its value, the state.
#[test]
fn a_stale_read_is_explained() {
    use EventType::*;
    let h = history(&[
        (0, Invoke, "write", json!(1)),
        (0, Ok, "write", json!(1)),
        (1, Invoke, "write", json!(2)),
        (1, Ok, "write", json!(2)),
        (2, Invoke, "read", Value::Null),
        (2, Ok, "read", json!(1)),
    ]);
    let r = run(&h, ModelKind::CasRegister, Route::Auto);
    assert_eq!(r.verdict, Verdict::Illegal);
    assert_eq!(r.partitions[0].procedure, Procedure::ReadsFrom);
    let e = r.explanation().unwrap();
    assert_eq!(e.op.f, "read");
    assert_eq!(e.needs, "value 1");
    assert_eq!(e.after.as_ref().map(|a| a.value.clone()), Some(json!(2)));
    assert_eq!(e.states, vec!["2".to_string()]);
    assert_eq!(
        e.message,
        "key k: read -> 1 (op #2, process 2) cannot be linearized: it needs value 1, \
         but once write 2 (op #1, process 1) had taken effect the state could only be 2"
    );
    assert!(e.prefix_confirmed);
    assert_eq!(e.prefix_end_event, 5);
    assert_eq!(e.linearized, 2);
    assert_eq!(e.longest_linearization[1].state, "2");
}
