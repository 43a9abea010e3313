//! A brute-force linearizability check written from the models' documented sequential
//! semantics on plain JSON values: every order of the operations that respects real time,
//! every subset of the unknown-outcome ones. Shared by the property tests.

use checker::history::{History, Status};
use checker::ModelKind;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A reference state per key, as JSON.
pub fn initial(model: ModelKind) -> Value {
    match model {
        ModelKind::Kv => json!(""),
        ModelKind::Set => json!([]),
        _ => Value::Null,
    }
}

/// Every state the operation may lead to when it takes effect in `s`, given what
/// its completion reported (`None` output = unknown outcome).
pub fn successors(
    model: ModelKind,
    s: &Value,
    f: &str,
    input: &Value,
    output: Option<&Value>,
) -> Vec<Value> {
    let ok = |expected: &Value| output.is_none_or(|o| o == expected);
    match (model, f) {
        (ModelKind::Register | ModelKind::CasRegister, "read") => {
            if ok(s) {
                vec![s.clone()]
            } else {
                vec![]
            }
        }
        (ModelKind::Register | ModelKind::CasRegister, "write") => vec![input.clone()],
        (ModelKind::CasRegister, "cas") => {
            if &input[0] == s {
                vec![input[1].clone()]
            } else {
                vec![] // a cas that does not match is a fail: never recorded as ok
            }
        }
        (ModelKind::Kv, "get") => {
            let got = output.map(|o| if o.is_null() { json!("") } else { o.clone() });
            if got.is_none_or(|g| &g == s) {
                vec![s.clone()]
            } else {
                vec![]
            }
        }
        (ModelKind::Kv, "put") => vec![input.clone()],
        (ModelKind::Kv, "append") => vec![json!(format!(
            "{}{}",
            s.as_str().unwrap(),
            input.as_str().unwrap()
        ))],
        (ModelKind::Set, "add") => {
            let mut v: Vec<i64> = s
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect();
            v.push(input.as_i64().unwrap());
            v.sort();
            v.dedup();
            vec![json!(v)]
        }
        (ModelKind::Set, "read") => {
            let norm = |x: &Value| {
                let mut v: Vec<i64> = x
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_i64().unwrap())
                    .collect();
                v.sort();
                v.dedup();
                v
            };
            if output.is_none_or(|o| norm(o) == norm(s)) {
                vec![s.clone()]
            } else {
                vec![]
            }
        }
        (ModelKind::S3Object, "get") => {
            let fine = match output {
                None => true,
                Some(Value::Null) => s.is_null(),
                Some(o) => {
                    // A missing or unknown etag matches any.
                    !s.is_null()
                        && o["body"] == s["body"]
                        && (s["etag"].is_null() || o["etag"].is_null() || o["etag"] == s["etag"])
                }
            };
            if fine {
                vec![s.clone()]
            } else {
                vec![]
            }
        }
        (ModelKind::S3Object, "delete") => vec![Value::Null],
        (ModelKind::S3Object, "put") => {
            let holds_any = match (&input["if_none_match"], &input["if_match"]) {
                (Value::String(_), _) => vec![s.is_null()],
                (_, Value::String(m)) => {
                    if s.is_null() {
                        vec![false]
                    } else if s["etag"].is_null() {
                        vec![true, false] // the etag was never learnt: either
                    } else {
                        vec![s["etag"] == json!(m)]
                    }
                }
                _ => vec![true],
            };
            let mut out = Vec::new();
            for holds in holds_any {
                match output {
                    Some(Value::String(p)) if p == "precondition-failed" => {
                        if !holds {
                            out.push(s.clone())
                        }
                    }
                    Some(o) => {
                        if holds {
                            out.push(json!({"body": input["body"], "etag": o["etag"]}))
                        }
                    }
                    None => {
                        if holds {
                            out.push(json!({"body": input["body"], "etag": null}))
                        }
                    }
                }
            }
            out
        }
        _ => panic!("unexpected {f}"),
    }
}

/// Brute force: every order of the operations that respects real time, every
/// subset of the unknown-outcome ones.
pub fn brute_force(model: ModelKind, h: &History) -> bool {
    let ops: Vec<_> = h.ops.iter().filter(|o| o.status != Status::Fail).collect();
    fn go(
        model: ModelKind,
        ops: &[&checker::Operation],
        used: u32,
        states: &BTreeMap<Option<String>, Value>,
    ) -> bool {
        let all_ok_used = ops
            .iter()
            .enumerate()
            .all(|(i, o)| o.status != Status::Ok || used & (1 << i) != 0);
        if all_ok_used {
            return true;
        }
        for (i, o) in ops.iter().enumerate() {
            if used & (1 << i) != 0 {
                continue;
            }
            // Every ok operation that completed before this one began must be placed.
            let ready = ops.iter().enumerate().all(|(j, p)| {
                used & (1 << j) != 0 || p.status != Status::Ok || p.complete.unwrap() > o.invoke
            });
            if !ready {
                continue;
            }
            let s = states
                .get(&o.key)
                .cloned()
                .unwrap_or_else(|| initial(model));
            let output = (o.status == Status::Ok).then_some(&o.output);
            for n in successors(model, &s, &o.f, &o.value, output) {
                let mut next = states.clone();
                next.insert(o.key.clone(), n);
                if go(model, ops, used | (1 << i), &next) {
                    return true;
                }
            }
        }
        false
    }
    go(model, &ops, 0, &BTreeMap::new())
}
