//! Garbage in, an error with a line number out: never a panic.

use checker::linearizable::{check, Budget};
use checker::{parse_bytes, parse_str, Format, ModelKind};
use proptest::prelude::*;

const FORMATS: [Format; 4] = [Format::Auto, Format::Jsonl, Format::Edn, Format::JepsenLog];

/// Lines that look almost right, to reach deep into each reader.
const SEEDS: &[&str] = &[
    "{:process 0, :type :invoke, :f :append, :key \"0\", :value \"x 0 0 y\"}",
    "{:process 0, :type :ok, :f :append, :key \"0\", :value \"x 0 0 y\"}",
    "{:process 1, :type :invoke, :f :cas, :value [1 2]}",
    "{:process :nemesis, :type :info, :f :start, :value nil}",
    "INFO  jepsen.util - 3\t:invoke\t:read\tnil",
    "INFO  jepsen.util - 3\t:ok\t:read\t4",
    "INFO  jepsen.util - 1   :info   :cas    :timed-out",
    "INFO  jepsen.util - 2   :fail   :read   :timed-out",
    r#"{"index":0,"time":1,"process":3,"type":"invoke","f":"cas","key":"k1","value":[1,2]}"#,
    r#"{"index":1,"time":2,"process":3,"type":"ok","f":"cas","key":"k1","value":[1,2]}"#,
    r#"{"process":3,"type":"fail","f":"write","value":"\u00e9","error":"refused"}"#,
];

fn mutated() -> impl Strategy<Value = String> {
    let line =
        (0..SEEDS.len(), any::<usize>(), any::<usize>(), ".{0,3}").prop_map(|(i, cut, at, ins)| {
            let s = SEEDS[i];
            let b: Vec<char> = s.chars().collect();
            let cut = cut % (b.len() + 1);
            let at = at % (cut + 1);
            let mut out: String = b[..at].iter().collect();
            out.push_str(&ins);
            out.extend(b[at..cut].iter());
            out
        });
    prop::collection::vec(line, 0..12).prop_map(|l| l.join("\n"))
}

fn exercise(text: &str) {
    for f in FORMATS {
        match parse_str(text, f) {
            Ok(h) => {
                // Whatever parses must also survive every model.
                for m in ModelKind::ALL {
                    let _ = check(&h, *m, &Budget::default());
                }
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.starts_with("line ") || msg.starts_with("cannot"),
                    "{msg}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..200)) {
        for f in FORMATS {
            if let Err(e) = parse_bytes(&b, f) {
                prop_assert!(e.to_string().starts_with("line ") || e.to_string().starts_with("cannot"));
            }
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(s in "\\PC{0,200}") {
        exercise(&s);
    }

    #[test]
    fn mutated_lines_never_panic(s in mutated()) {
        exercise(&s);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let line = format!(
        "{{:process 0, :type :invoke, :f :read, :value {}}}",
        "[".repeat(100_000)
    );
    let e = parse_str(&line, Format::Edn).unwrap_err();
    assert!(e.to_string().starts_with("line 1"), "{e}");
    let json = format!("{}\n", "[".repeat(100_000));
    assert!(parse_str(&json, Format::Jsonl).is_err());
}

#[test]
fn errors_name_the_line() {
    let text = "{:process 0, :type :invoke, :f :read, :value nil}\n{:process 0, :type :ok, :f :read, :value [1 2}\n";
    let e = parse_str(text, Format::Auto).unwrap_err();
    assert!(e.to_string().starts_with("line 2"), "{e}");
    let text = "INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - x\t:ok\t:read\t1\n";
    let e = parse_str(text, Format::Auto).unwrap_err();
    assert!(e.to_string().starts_with("line 2:"), "{e}");
    let e = parse_str(
        "{\"process\":0,\"type\":\"ok\",\"f\":\"read\"}\n",
        Format::Jsonl,
    )
    .unwrap_err();
    assert!(
        e.to_string().starts_with("line 1:") && e.to_string().contains("no pending"),
        "{e}"
    );
}
