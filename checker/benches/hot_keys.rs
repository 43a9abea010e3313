//! `cargo bench -p checker --bench hot_keys`: hot-key histories from `checker::generate`
//! (register, cas-register, kv; 20 to 64 processes; 10 to 30% info operations; 40,000 to
//! 1,000,000 operations; linearizable, with a stale read, with a lost write; and 40,000-operation
//! set histories on 16 keys, whose reads return whole sets), then the shared
//! kv histories beside Porcupine's reference time, then a 1,000,000-operation history read
//! from a file and checked, with the peak memory of both together.
//!
//! One row per history: time and peak memory of the check alone (the history already in
//! memory; its own size is the `history` column). Figures are wall-clock on a shared machine:
//! noisy. A verdict that differs from the expected one is printed loudly and makes the
//! benchmark exit 1; times are never asserted.
//!
//! `HOT_ONLY=substring` keeps the rows whose label contains it; `HOT_SKIP_1M=1` skips the
//! 1,000,000-operation rows and the file check; `HOT_FILE_ONLY=1` runs only the file check.

mod common;

use checker::generate::{generate, Fault, Spec};
use checker::linearizable::{check, Budget};
use checker::{read_history, Format, ModelKind, Procedure, Verdict};
use common::{measure, mib};
use std::io::Write;
use std::time::Duration;

#[global_allocator]
static ALLOC: common::Counting = common::Counting;

struct Row {
    label: String,
    model: ModelKind,
    ops: usize,
    processes: String,
    info: String,
    keys: usize,
    verdict: Verdict,
    expected: Verdict,
    procedure: String,
    secs: f64,
    peak: usize,
    history: usize,
    porcupine: String,
}

fn header() {
    println!(
        "{:<28} {:<12} {:>9} {:>5} {:>5} {:>4} {:>8} {:>8} {:>10} {:>9} {:>10} {:>10} {:>10}",
        "history",
        "model",
        "ops",
        "procs",
        "info",
        "keys",
        "verdict",
        "expected",
        "decided by",
        "time ms",
        "peak mem",
        "history",
        "porcupine"
    );
}

fn print(r: &Row) {
    println!(
        "{:<28} {:<12} {:>9} {:>5} {:>5} {:>4} {:>8} {:>8} {:>10} {:>9.1} {:>10} {:>10} {:>10}{}",
        r.label,
        r.model.name(),
        r.ops,
        r.processes,
        r.info,
        r.keys,
        r.verdict.as_str(),
        r.expected.as_str(),
        r.procedure,
        r.secs * 1e3,
        mib(r.peak),
        mib(r.history),
        r.porcupine,
        if r.verdict != r.expected {
            "   <<<<< VERDICT MISMATCH"
        } else {
            ""
        }
    );
}

fn procedures(r: &checker::LinearizabilityResult) -> String {
    let fast = r
        .partitions
        .iter()
        .filter(|p| p.procedure == Procedure::ReadsFrom)
        .count();
    match (fast, r.partitions.len()) {
        (f, n) if f == n => "reads-from".into(),
        (0, _) => "search".into(),
        (f, n) => format!("{f}/{n} r-f"),
    }
}

fn main() {
    if std::env::var_os("HOT_FILE_ONLY").is_some() {
        for model in [ModelKind::CasRegister, ModelKind::Kv] {
            file_check(model);
        }
        return;
    }
    let only = std::env::var("HOT_ONLY").ok();
    let skip_1m = std::env::var_os("HOT_SKIP_1M").is_some();
    let budget = Budget::with_timeout(Duration::from_secs(60));
    header();
    let mut rows = generated_rows(only.as_deref(), skip_1m, &budget);
    rows.extend(shared_kv_rows(only.as_deref(), &budget));
    if !skip_1m && only.is_none() {
        for model in [ModelKind::CasRegister, ModelKind::Kv] {
            file_check(model);
        }
    }
    conclude(&rows);
}

/// Every generated history: each size, model and fault (none, a stale read, a lost write).
fn generated_rows(only: Option<&str>, skip_1m: bool, budget: &Budget) -> Vec<Row> {
    // (operations, processes, info fraction, keys)
    let sizes: &[(usize, usize, f64, usize)] = &[
        (40_000, 20, 0.10, 3),
        (40_000, 64, 0.30, 1),
        (100_000, 32, 0.20, 2),
        (100_000, 64, 0.30, 1),
        (1_000_000, 64, 0.20, 4),
        (1_000_000, 64, 0.30, 1),
    ];
    let models = [
        ModelKind::Register,
        ModelKind::CasRegister,
        ModelKind::Kv,
        ModelKind::Set,
    ];
    let faults = [
        (Fault::None, "ok"),
        (Fault::StaleRead, "stale"),
        (Fault::LostWrite, "lost"),
    ];
    let mut rows = Vec::new();
    for &(ops, processes, info, keys) in sizes {
        if skip_1m && ops >= 1_000_000 {
            continue;
        }
        for model in models {
            // A set read returns the whole set, so a set history grows with the square of its
            // length: only the smaller sizes.
            if model == ModelKind::Set && ops > 40_000 {
                continue;
            }
            let keys = if model == ModelKind::Set { 16 } else { keys };
            for (fault, name) in faults {
                let label = format!(
                    "{}-{}k-p{}-k{}-{}",
                    match model {
                        ModelKind::CasRegister => "cas",
                        ModelKind::Kv => "kv",
                        ModelKind::Set => "set",
                        _ => "reg",
                    },
                    ops / 1000,
                    processes,
                    keys,
                    name
                );
                if only.is_some_and(|o| !label.contains(o)) {
                    continue;
                }
                let spec = Spec::new(model, ops, processes, keys, info)
                    .fault(fault)
                    .seed(ops as u64 ^ (processes as u64 * 7919));
                rows.push(generated_row(label, &spec, budget));
            }
        }
    }
    rows
}

/// Generates one history, checks it, prints its row and, for an illegal one, the explanation.
fn generated_row(label: String, spec: &Spec, budget: &Budget) -> Row {
    let base = common::current();
    let g = generate(spec);
    let history = common::current().saturating_sub(base);
    let actual_info = g
        .history
        .ops
        .iter()
        .filter(|o| o.status == checker::Status::Info)
        .count();
    let (r, d, peak) = measure(|| check(&g.history, spec.model, budget).expect("check"));
    let row = Row {
        label,
        model: spec.model,
        ops: g.history.ops.len(),
        processes: spec.processes.to_string(),
        info: format!(
            "{:.0}%",
            100.0 * actual_info as f64 / g.history.ops.len() as f64
        ),
        keys: spec.keys,
        verdict: r.verdict,
        expected: g.expected,
        procedure: procedures(&r),
        secs: d.as_secs_f64(),
        peak,
        history,
        porcupine: "-".into(),
    };
    print(&row);
    if let Some(e) = r.explanation() {
        // What a person reads (the witness of a generated fault: op #{witness}).
        let m: String = e.message.chars().take(300).collect();
        let more = if m.len() < e.message.len() {
            " ..."
        } else {
            ""
        };
        println!(
            "    {m}{more} [witness op #{}]",
            g.witness
                .map(|w| w.to_string())
                .unwrap_or_else(|| "-".into())
        );
    }
    if row.verdict != row.expected {
        for p in r.partitions.iter().filter(|p| p.unknown.is_some()) {
            println!("    {:?}: {:?}", p.key, p.unknown);
        }
    }
    row
}

/// The shared kv histories, beside Porcupine's reference time.
fn shared_kv_rows(only: Option<&str>, budget: &Budget) -> Vec<Row> {
    let dir = common::shared_dir();
    let baseline = common::porcupine_baseline();
    let expected = std::fs::read_to_string(dir.join("EXPECTED.tsv")).unwrap_or_default();
    let mut rows = Vec::new();
    for line in expected.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < 4 || !c[0].starts_with("kv/") {
            continue;
        }
        if only.is_some_and(|o| !c[0].contains(o)) {
            continue;
        }
        let model: ModelKind = c[1].parse().expect("model");
        let base = common::current();
        let h = read_history(&dir.join(c[0]), Format::Auto).expect("history");
        let history = common::current().saturating_sub(base);
        let (r, d, peak) = measure(|| check(&h, model, budget).expect("check"));
        let mut processes: Vec<u64> = h.ops.iter().map(|o| o.process).collect();
        processes.sort_unstable();
        processes.dedup();
        let mut keys: Vec<&str> = h.ops.iter().filter_map(|o| o.key.as_deref()).collect();
        keys.sort_unstable();
        keys.dedup();
        let info = h
            .ops
            .iter()
            .filter(|o| o.status == checker::Status::Info)
            .count();
        let row = Row {
            label: c[0].to_string(),
            model,
            ops: h.ops.len(),
            processes: processes.len().to_string(),
            info: format!("{:.0}%", 100.0 * info as f64 / h.ops.len().max(1) as f64),
            keys: keys.len(),
            verdict: r.verdict,
            expected: if c[3] == "ok" {
                Verdict::Ok
            } else {
                Verdict::Illegal
            },
            procedure: procedures(&r),
            secs: d.as_secs_f64(),
            peak,
            history,
            porcupine: baseline
                .get(&(c[0].to_string(), c[1].to_string()))
                .map_or_else(|| "-".into(), |ms| format!("{ms} ms")),
        };
        print(&row);
        rows.push(row);
    }
    rows
}

/// The summary line; exits 1 when any verdict differs from the expected one.
fn conclude(rows: &[Row]) {
    let bad: Vec<&Row> = rows.iter().filter(|r| r.verdict != r.expected).collect();
    let slowest = rows.iter().map(|r| r.secs).fold(0.0, f64::max);
    let biggest = rows.iter().map(|r| r.peak).max().unwrap_or(0);
    println!(
        "\n{} histories; slowest check {:.3} s, largest check peak {}",
        rows.len(),
        slowest,
        mib(biggest)
    );
    if !bad.is_empty() {
        println!(
            "\n!!!!! {} VERDICTS DIFFER FROM THE EXPECTED ONES:",
            bad.len()
        );
        for r in bad {
            println!(
                "!!!!!   {}: got {}, expected {}",
                r.label, r.verdict, r.expected
            );
        }
        std::process::exit(1);
    }
}

/// Writes a 1,000,000-operation history to a file, then reads and checks it: the peak covers
/// the parsed history and the check together.
fn file_check(model: ModelKind) {
    let spec = Spec::new(model, 1_000_000, 64, 4, 0.2)
        .fault(Fault::StaleRead)
        .seed(99);
    let path = std::env::temp_dir().join(format!(
        "chaos-hot-keys-{}-{}.jsonl",
        model.name(),
        std::process::id()
    ));
    let expected = {
        let g = generate(&spec);
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("temp file"));
        for e in &g.history.events {
            serde_json::to_writer(&mut out, e).expect("write");
            out.write_all(b"\n").expect("write");
        }
        out.flush().expect("flush");
        g.expected
    };
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let budget = Budget::with_timeout(Duration::from_secs(120));
    let base = common::current();
    let ((parsed, r), d, peak) = measure(|| {
        let h = read_history(&path, Format::Jsonl).expect("read");
        let parsed = common::current().saturating_sub(base);
        let r = check(&h, model, &budget).expect("check");
        (parsed, r)
    });
    let _ = std::fs::remove_file(&path);
    println!(
        "\n1,000,000-operation {} history from a {} file: read and checked in {:.2} s, {} (expected {}), peak {} including the parsed history (the history alone: {})",
        model.name(),
        mib(size as usize),
        d.as_secs_f64(),
        r.verdict,
        expected,
        mib(peak),
        mib(parsed)
    );
    if r.verdict != expected {
        println!("!!!!! VERDICT MISMATCH for the 1,000,000-operation file");
        std::process::exit(1);
    }
}
