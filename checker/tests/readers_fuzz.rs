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

/// Inputs per damaged-line target: `FUZZ_CASES` (1,000 by default; the nightly suite runs
/// 100,000).
fn damaged_cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000)
}

/// A valid Jepsen log, one event per line (ended by a line end).
const JEPSEN_LOG: &[&str] = &[
    "INFO  jepsen.util - 0\t:invoke\t:write\t1",
    "INFO  jepsen.util - 0\t:ok\t:write\t1",
    "INFO  jepsen.util - 12\t:invoke\t:read\tnil",
    "INFO  jepsen.util - 12\t:ok\t:read\t1",
    "INFO  jepsen.util - 3\t:invoke\t:cas\t[1 2]",
    "INFO  jepsen.util - 3\t:fail\t:cas\t[1 2]",
    "INFO  jepsen.util - 4\t:invoke\t:write\t3",
    "INFO  jepsen.util - 4\t:info\t:write\t:timed-out",
];

/// The same events as EDN maps.
const EDN_LOG: &[&str] = &[
    "{:process 0, :type :invoke, :f :write, :value 1}",
    "{:process 0, :type :ok, :f :write, :value 1}",
    "{:process 12, :type :invoke, :f :read, :value nil}",
    "{:process 12, :type :ok, :f :read, :value 1}",
    "{:process 3, :type :invoke, :f :cas, :value [1 2]}",
    "{:process 3, :type :fail, :f :cas, :value [1 2]}",
    "{:process 4, :type :invoke, :f :write, :value 3}",
    "{:process 4, :type :info, :f :write, :value 3, :error :timed-out}",
];

/// One edit of one line: a character deleted, inserted or replaced (never a line end: a line
/// split in two or joined is another test), or the file cut at a character.
#[derive(Clone, Debug)]
enum Damage {
    Delete { line: usize, at: usize },
    Insert { line: usize, at: usize, c: char },
    Replace { line: usize, at: usize, c: char },
    Cut { at: usize },
}

fn damage() -> impl Strategy<Value = Damage> {
    let c = prop::sample::select(vec![
        ' ', '\t', ':', '-', '.', ',', '0', '7', 'x', 'u', '{', '}', '[', ']', '"', '#', '\\', 'é',
    ]);
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(line, at)| Damage::Delete { line, at }),
        (any::<usize>(), any::<usize>(), c.clone()).prop_map(|(line, at, c)| Damage::Insert {
            line,
            at,
            c
        }),
        (any::<usize>(), any::<usize>(), c).prop_map(|(line, at, c)| Damage::Replace {
            line,
            at,
            c
        }),
        any::<usize>().prop_map(|at| Damage::Cut { at }),
    ]
}

/// The damaged text and how many whole event lines it still has.
fn apply(lines: &[&str], d: &Damage) -> (String, usize) {
    let edit = |line: usize, at: usize, f: &dyn Fn(&mut Vec<char>, usize)| {
        let k = line % lines.len();
        let mut out = String::new();
        for (i, l) in lines.iter().enumerate() {
            let mut chars: Vec<char> = l.chars().collect();
            if i == k {
                f(&mut chars, at);
            }
            out.extend(chars);
            out.push('\n');
        }
        (out, lines.len())
    };
    match *d {
        Damage::Delete { line, at } => edit(line, at, &|c, at| {
            let at = at % c.len();
            c.remove(at);
        }),
        Damage::Insert { line, at, c: ch } => edit(line, at, &|c, at| {
            let at = at % (c.len() + 1);
            c.insert(at, ch);
        }),
        Damage::Replace { line, at, c: ch } => edit(line, at, &|c, at| {
            let at = at % c.len();
            c[at] = ch;
        }),
        Damage::Cut { at } => {
            let whole: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let chars: Vec<char> = whole.chars().collect();
            let cut: String = chars[..at % (chars.len() + 1)].iter().collect();
            // Whole lines are those ended by a line end, and a last line cut exactly at its
            // end (EDN reads it; a Jepsen log refuses any unended last line).
            let ended = cut.matches('\n').count();
            let tail = &cut[cut.rfind('\n').map_or(0, |i| i + 1)..];
            let whole_tail = !tail.is_empty() && lines.contains(&tail);
            (cut.clone(), ended + usize::from(whole_tail))
        }
    }
}

/// Never silent: a damaged history reads as an error that names a line, or as exactly as many
/// events as it has whole event lines (a line is never dropped without a word).
fn never_drops_a_line(lines: &[&str], format: Format, d: &Damage) -> Result<(), TestCaseError> {
    let (text, whole) = apply(lines, d);
    for f in [format, Format::Auto] {
        match parse_str(&text, f) {
            Ok(h) => {
                prop_assert_eq!(
                    h.events.len(),
                    whole,
                    "{:?} read {} events from {} whole lines:\n{}",
                    f,
                    h.events.len(),
                    whole,
                    text
                );
                // A Jepsen log's unended last line may be cut anywhere: never read.
                prop_assert!(
                    format != Format::JepsenLog || text.is_empty() || text.ends_with('\n'),
                    "{:?} read a last line without its line end:\n{}",
                    f,
                    text
                );
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("line "), "{}", msg);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: damaged_cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_damaged_jepsen_log_line_is_read_whole_or_named(d in damage()) {
        never_drops_a_line(JEPSEN_LOG, Format::JepsenLog, &d)?;
    }

    #[test]
    fn a_damaged_edn_line_is_read_whole_or_named(d in damage()) {
        never_drops_a_line(EDN_LOG, Format::Edn, &d)?;
    }
}
