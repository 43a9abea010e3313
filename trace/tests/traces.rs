//! The counterexamples kept in the repository's traces/ folder read as traces.

use std::path::Path;

use chaos_trace::{read_file, Format, Trace, Value};

fn read(relative: &str) -> Trace {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../traces")
        .join(relative);
    read_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn actions(trace: &Trace) -> Vec<(&str, Option<&Value>)> {
    trace
        .steps
        .iter()
        .map(|step| {
            let name = step.action.name.as_deref().unwrap_or("(unnamed)");
            (name, step.action.params.first().map(|(_, value)| value))
        })
        .collect()
}

#[test]
fn quint_counterexample_of_hdds_16743() {
    let trace = read("hdds-16743/counterexample.itf.json");
    assert_eq!(trace.format, Format::Itf);
    assert_eq!(
        trace.vars,
        [
            "inFlight",
            "applied",
            "retryCache",
            "onTheWire",
            "told",
            "sent"
        ]
    );
    let call = |n| Some(Value::Int(n));
    let expected = [
        ("send", call(2)),
        ("send", call(1)),
        ("apply", call(1)),
        ("loseAnswer", call(1)),
        ("restart", None),
        ("restart", None),
        ("resend", call(1)),
        ("resend", call(2)),
        ("apply", call(1)),
        ("deliver", call(1)),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(name, call)| (*name, call.as_ref()))
        .collect();
    assert_eq!(actions(&trace), expected);
    // Every pick is named `call`; a restart picks nothing (Quint's None, left out).
    for step in &trace.steps {
        assert!(step.action.params.iter().all(|(name, _)| name == "call"));
    }
    let key_already_exists = Value::Variant {
        tag: "KeyAlreadyExists".into(),
        value: Box::new(Value::List(vec![])),
    };
    let last = &trace.steps[9].state;
    assert_eq!(
        last["told"],
        Value::Map(vec![(Value::Int(1), Value::List(vec![key_already_exists]))])
    );
    assert_eq!(last["retryCache"], trace.steps[8].state["retryCache"]);
    assert_eq!(trace.steps[4].state["retryCache"], Value::Map(vec![]));
    assert_eq!(trace.lasso, None);
}

#[test]
fn tlc_counterexample_of_hdds_16767() {
    let trace = read("hdds-16767/counterexample.tlc.json");
    assert_eq!(trace.format, Format::Tlc);
    assert_eq!(
        trace.vars,
        ["now", "paused", "log", "applied", "key", "answers"]
    );
    let names: Vec<_> = actions(&trace).into_iter().map(|(name, _)| name).collect();
    assert_eq!(
        names,
        [
            "Pause",
            "Tick",
            "RecoverLease",
            "ApplyRecoverLease",
            "ApplyRecoverLease",
            "Tick",
            "Resume",
            "ApplyRecoverLease",
            "Tick",
            "Close",
            "ApplyClose",
            "ApplyClose",
            "ApplyClose",
        ]
    );
    let late_apply = &trace.steps[7].action;
    assert_eq!(late_apply.param("o"), Some(&Value::Str("om2".into())));
    assert_eq!(late_apply.param("i"), Some(&Value::Int(1)));
    assert_eq!(
        late_apply
            .params
            .iter()
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>(),
        ["o", "i"]
    );
    let field = |state: &chaos_trace::State, om: &str, name: &str| match &state["key"] {
        Value::Record(by_om) => match &by_om[om] {
            Value::Record(key) => key[name].clone(),
            other => panic!("{other}"),
        },
        other => panic!("{other}"),
    };
    assert_eq!(
        field(&trace.steps[7].state, "om2", "recovering"),
        Value::Bool(true)
    );
    let last = &trace.steps[12].state;
    assert_eq!(field(last, "om1", "length"), Value::Int(2048));
    assert_eq!(field(last, "om3", "open"), Value::Bool(false));
    assert_eq!(field(last, "om2", "length"), Value::Int(1024));
    assert_eq!(field(last, "om2", "open"), Value::Bool(true));
    // `log` is a sequence (a function on 1..2): an array.
    assert!(matches!(&last["log"], Value::List(entries) if entries.len() == 2));
}
