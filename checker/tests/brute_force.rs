//! Random small histories (up to 8 operations, several processes, some with
//! unknown outcomes, some with wrong results) for every model: the checker's
//! verdict must equal a brute-force search over all orders, written here from the
//! models' documented sequential semantics on plain JSON values.

mod common;

use checker::history::{Event, EventType, History, Status};
use checker::linearizable::{check, Budget};
use checker::{ModelKind, Verdict};
use common::{brute_force, initial, successors};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// An operation in flight on one process of the simulated store.
struct Flight {
    f: &'static str,
    key: String,
    input: Value,
    result: Option<Value>, // Some once it took effect
    failed: bool,
}

/// Drives a correct store with random actions, then lies now and then.
fn generate(model: ModelKind, acts: &[(u8, u8, u8, u8)]) -> Vec<Event> {
    let mut store: BTreeMap<String, Value> = BTreeMap::new();
    let mut flights: Vec<Option<Flight>> = (0..4).map(|_| None).collect();
    let mut process: Vec<u64> = (0..4).collect();
    let mut next_process = 4;
    let mut events = Vec::new();
    let mut invoked = 0;
    let mut etags = 0;
    for &(p, a, b, c) in acts {
        let p = p as usize % 4;
        match flights[p].take() {
            None => {
                if invoked == max_ops() {
                    continue;
                }
                invoked += 1;
                let (f, input) = random_operation(model, a, b);
                let key_opt = if model == ModelKind::Register && c % 3 == 0 {
                    None
                } else {
                    Some(format!("k{}", c % 2))
                };
                events.push(Event::new(
                    process[p],
                    EventType::Invoke,
                    f,
                    key_opt.as_deref(),
                    input.clone(),
                ));
                flights[p] = Some(Flight {
                    f,
                    key: key_opt.unwrap_or_default(),
                    input,
                    result: None,
                    failed: false,
                });
            }
            Some(mut fl) => {
                if fl.result.is_none() && !fl.failed && a % 3 != 0 {
                    // The linearization point.
                    take_effect(model, &mut store, &mut fl, &mut etags);
                    flights[p] = Some(fl);
                    continue;
                }
                // Complete it.
                let (kind, value) = completion(model, &mut fl, b, c);
                let key_opt = if fl.key.is_empty() {
                    None
                } else {
                    Some(fl.key.as_str())
                };
                events.push(Event::new(process[p], kind, fl.f, key_opt, value));
                if kind == EventType::Info {
                    process[p] = next_process;
                    next_process += 1;
                }
            }
        }
    }
    for (i, e) in events.iter_mut().enumerate() {
        e.index = i as u64;
        e.time = i as u64;
    }
    events
}

/// A random operation of the model (`f` and its input) from two random bytes.
fn random_operation(model: ModelKind, a: u8, b: u8) -> (&'static str, Value) {
    match model {
        ModelKind::Register => match a % 2 {
            0 => ("read", Value::Null),
            _ => ("write", json!(b % 3)),
        },
        ModelKind::CasRegister => match a % 3 {
            0 => ("read", Value::Null),
            1 => ("write", json!(b % 3)),
            _ => ("cas", json!([b % 3, (b / 3) % 3])),
        },
        ModelKind::Kv => match a % 3 {
            0 => ("get", Value::Null),
            1 => ("put", json!(["a", "b"][b as usize % 2])),
            _ => ("append", json!(["a", "b", "c"][b as usize % 3])),
        },
        ModelKind::Set => match a % 2 {
            0 => ("read", Value::Null),
            _ => ("add", json!(b % 4)),
        },
        ModelKind::S3Object => match a % 5 {
            0 | 1 => ("get", Value::Null),
            2 => ("put", json!({"body": (["a", "b"][b as usize % 2])})),
            3 => {
                if b.is_multiple_of(2) {
                    ("put", json!({"body": "c", "if_none_match": "*"}))
                } else {
                    (
                        "put",
                        json!({"body": "d", "if_match": format!("e{}", b % 3)}),
                    )
                }
            }
            _ => ("delete", Value::Null),
        },
    }
}

/// The operation takes effect on the store now: its new state, and the result it will report
/// (none for a cas whose expected value was not there: it fails).
fn take_effect(
    model: ModelKind,
    store: &mut BTreeMap<String, Value>,
    fl: &mut Flight,
    etags: &mut u32,
) {
    let s = store
        .get(&fl.key)
        .cloned()
        .unwrap_or_else(|| initial(model));
    let (n, out) = match (model, fl.f) {
        (_, "read" | "get") => (
            s.clone(),
            if model == ModelKind::S3Object && !s.is_null() {
                json!({"body": s["body"], "etag": s["etag"]})
            } else {
                s.clone()
            },
        ),
        (ModelKind::CasRegister, "cas") => {
            if fl.input[0] == s {
                (fl.input[1].clone(), fl.input.clone())
            } else {
                fl.failed = true;
                (s.clone(), Value::Null)
            }
        }
        (ModelKind::S3Object, "put") => {
            let holds = if fl.input.get("if_none_match").is_some() {
                s.is_null()
            } else if let Some(m) = fl.input.get("if_match") {
                !s.is_null() && &s["etag"] == m
            } else {
                true
            };
            if holds {
                *etags += 1;
                let e = format!("e{}", *etags % 3);
                (
                    json!({"body": fl.input["body"], "etag": e}),
                    json!({"etag": e}),
                )
            } else {
                (s.clone(), json!("precondition-failed"))
            }
        }
        (ModelKind::S3Object, "delete") => (Value::Null, Value::Null),
        _ => {
            let n = successors(model, &s, fl.f, &fl.input, None).remove(0);
            (n, fl.input.clone())
        }
    };
    store.insert(fl.key.clone(), n);
    if !fl.failed {
        fl.result = Some(out);
    }
}

/// How the operation completes: fail if it failed, now and then info, its result (now and then
/// a wrong one, for a read), or, when it never took effect, fail (a read may say info).
fn completion(model: ModelKind, fl: &mut Flight, b: u8, c: u8) -> (EventType, Value) {
    if fl.failed {
        (EventType::Fail, fl.input.clone())
    } else if b.is_multiple_of(7) {
        (EventType::Info, Value::Null)
    } else if let Some(r) = fl.result.take() {
        // Now and then, a wrong answer.
        let r = if c.is_multiple_of(5) && matches!(fl.f, "read" | "get") {
            match model {
                ModelKind::Kv => json!(["", "a", "ab", "b", "ba"][c as usize % 5]),
                ModelKind::Set => json!([c % 4]),
                ModelKind::S3Object => {
                    json!({"body": (["a", "b", "c"][c as usize % 3])})
                }
                _ => json!(c % 3),
            }
        } else {
            r
        };
        (EventType::Ok, r)
    } else if !matches!(fl.f, "read" | "get") || b.is_multiple_of(2) {
        // Never took effect: fail (a read may just as well say info).
        if model == ModelKind::S3Object && fl.f == "put" {
            (EventType::Info, Value::Null)
        } else {
            (EventType::Fail, fl.input.clone())
        }
    } else {
        (EventType::Info, Value::Null)
    }
}

/// Operations per history: 8 by default (`BF_MAX_OPS` for a longer soak; the
/// brute force grows factorially).
fn max_ops() -> usize {
    std::env::var("BF_MAX_OPS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(8)
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(1000)
}

fn agree(model: ModelKind, acts: &[(u8, u8, u8, u8)]) -> Result<(), TestCaseError> {
    let events = generate(model, acts);
    let h = History::from_events(events).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let expected = if brute_force(model, &h) {
        Verdict::Ok
    } else {
        Verdict::Illegal
    };
    let got =
        check(&h, model, &Budget::default()).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let dump: Vec<String> = h
        .events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    prop_assert_eq!(got.verdict, expected, "history:\n{}", dump.join("\n"));

    if got.verdict == Verdict::Illegal {
        // The shortest illegal prefix is illegal, and one completion less is legal.
        let e = got.explanation().expect("an explanation");
        let key_events: Vec<Event> = h
            .events
            .iter()
            .filter(|x| x.key == e.key)
            .cloned()
            .collect();
        let truncated = |cut: usize| {
            let evs: Vec<Event> = h.events[..=cut]
                .iter()
                .filter(|x| x.key == e.key)
                .cloned()
                .collect();
            History::from_events(evs).unwrap()
        };
        prop_assert!(!key_events.is_empty());
        if e.prefix_confirmed {
            prop_assert!(
                !brute_force(model, &truncated(e.prefix_end_event)),
                "prefix legal:\n{}",
                dump.join("\n")
            );
            let prev = h
                .ops
                .iter()
                .filter(|o| o.key == e.key && o.status == Status::Ok)
                .filter_map(|o| o.complete)
                .filter(|&c| c < e.prefix_end_event)
                .max();
            if let Some(prev) = prev {
                prop_assert!(
                    brute_force(model, &truncated(prev)),
                    "shorter prefix illegal:\n{}",
                    dump.join("\n")
                );
            }
        }
    }
    Ok(())
}

fn acts() -> impl Strategy<Value = Vec<(u8, u8, u8, u8)>> {
    prop::collection::vec(any::<(u8, u8, u8, u8)>(), 1..(5 * max_ops()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn register_agrees(a in acts()) { agree(ModelKind::Register, &a)?; }

    #[test]
    fn cas_register_agrees(a in acts()) { agree(ModelKind::CasRegister, &a)?; }

    #[test]
    fn kv_agrees(a in acts()) { agree(ModelKind::Kv, &a)?; }

    #[test]
    fn set_agrees(a in acts()) { agree(ModelKind::Set, &a)?; }

    #[test]
    fn s3_object_agrees(a in acts()) { agree(ModelKind::S3Object, &a)?; }
}
