//! The readers on whole trace files: TLC's two shapes and ITF, each in tests/fixtures/.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chaos_trace::{read_file, Format, Lasso, SpecLocation, Trace, Value};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn read(name: &str) -> Trace {
    read_file(&fixture(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn int(n: i128) -> Value {
    Value::Int(n)
}

fn bools(values: &[bool]) -> Value {
    Value::List(values.iter().map(|b| Value::Bool(*b)).collect())
}

#[test]
fn tlc_since_2026_steps_in_order_of_their_state_numbers_with_parameters() {
    let trace = read("tlc-2026.json");
    assert_eq!(trace.format, Format::Tlc);
    assert_eq!(trace.vars, ["votes", "owner", "term"]);
    // A function on 1..3 is an array in TLC's JSON; one on file names is an object.
    assert_eq!(trace.initial["votes"], bools(&[false, false, false]));
    assert_eq!(trace.initial["owner"], Value::Record(BTreeMap::new()));
    let names: Vec<_> = trace
        .steps
        .iter()
        .map(|step| step.action.name.as_deref())
        .collect();
    assert_eq!(names, [Some("Open"), Some("Elect")]);
    let open = &trace.steps[0].action;
    // In the order `parameters` lists them, not the context's.
    assert_eq!(
        open.params,
        [
            ("w".to_string(), Value::Str("w1".into())),
            ("f".to_string(), Value::Str("f1".into()))
        ]
    );
    assert_eq!(
        open.location,
        Some(SpecLocation {
            module: "Lease".into(),
            begin_line: 20,
            begin_column: 5,
            end_line: 24,
            end_column: 40,
        })
    );
    assert_eq!(
        trace.steps[0].state["owner"],
        Value::Record(BTreeMap::from([(
            "f1".to_string(),
            Value::Str("w1".into())
        )]))
    );
    assert_eq!(trace.steps[1].action.param("n"), Some(&int(2)));
    assert_eq!(trace.steps[1].state["votes"], bools(&[true, true, false]));
    assert_eq!(trace.state(2).map(|state| &state["term"]), Some(&int(2)));
    assert_eq!(trace.lasso, None);
}

#[test]
fn tlc_before_2026_has_no_vars_and_its_back_edge_is_the_lasso() {
    let trace = read("tlc-before-2026.json");
    assert_eq!(trace.format, Format::TlcBefore2026);
    // Without `vars`, the initial state's names.
    assert_eq!(trace.vars, ["seen", "x"]);
    assert_eq!(trace.steps.len(), 2);
    assert_eq!(
        trace.steps[1].state["seen"],
        Value::List(vec![int(0), int(1)])
    );
    let Some(Lasso { to, action }) = trace.lasso else {
        panic!("no lasso: {trace:?}");
    };
    assert_eq!(to, 1);
    let action = action.expect("TLC names the action back");
    assert_eq!(action.name.as_deref(), Some("Wrap"));
    // No `parameters`: every entry of the context.
    assert_eq!(action.params, [("to".to_string(), int(1))]);
}

#[test]
fn itf_values_big_integers_maps_sets_tuples_and_its_loop() {
    let trace = read("apalache.itf.json");
    assert_eq!(trace.format, Format::Itf);
    assert_eq!(trace.vars, ["balances", "history", "pending"]);
    assert_eq!(
        trace.initial["balances"],
        Value::Map(vec![
            (Value::Str("alice".into()), int(100)),
            (Value::Str("bob".into()), int(0)),
        ])
    );
    let [step] = trace.steps.as_slice() else {
        panic!("one step expected: {trace:?}");
    };
    // Apalache names no actions.
    assert_eq!(step.action.name, None);
    assert_eq!(
        step.state["balances"],
        Value::Map(vec![
            (
                Value::Str("alice".into()),
                Value::BigInt("-170141183460469231731687303715884105729".into())
            ),
            (
                Value::Str("bob".into()),
                Value::BigInt("170141183460469231731687303715884105828".into())
            ),
        ])
    );
    // Past i64 but within i128.
    assert_eq!(
        step.state["history"],
        Value::List(vec![Value::List(vec![
            Value::Str("alice".into()),
            Value::Str("bob".into()),
            int(9_223_372_036_854_775_808),
        ])])
    );
    assert_eq!(
        step.state["pending"],
        Value::Set(vec![Value::List(vec![Value::Str("bob".into()), int(7)])])
    );
    assert_eq!(
        trace.lasso,
        Some(Lasso {
            to: 0,
            action: None
        })
    );
}
