//! `cargo bench -p checker --bench porcupine`: times every history in the shared
//! EXPECTED.tsv (median of 5 runs, parsing excluded, like Porcupine's baseline),
//! with peak memory from a counting allocator; then `kv/c50-bad.txt` key by key,
//! and a generated 1,000,000-operation key-value history.
//!
//! `BENCH_ONLY=substring` limits the table to matching files; `BENCH_SKIP_1M=1`
//! skips the big history, `BENCH_1M_ONLY=1` runs only that.

use checker::history::{Event, EventType, History};
use checker::linearizable::{check, Budget};
use checker::{read_history, Format, ModelKind, Verdict};
use common::{measure, mib};
use serde_json::json;
use std::time::Duration;

mod common;

#[global_allocator]
static ALLOC: common::Counting = common::Counting;

fn main() {
    // `cargo bench` passes --bench; ignore arguments.
    let dir = common::shared_dir();
    let table = std::fs::read_to_string(dir.join("EXPECTED.tsv")).unwrap_or_else(|e| {
        eprintln!("cannot read {}: {e}", dir.join("EXPECTED.tsv").display());
        std::process::exit(1)
    });
    let only = std::env::var("BENCH_ONLY").ok();
    if std::env::var_os("BENCH_1M_ONLY").is_some() {
        big_history();
        return;
    }
    let budget = Budget::with_timeout(Duration::from_secs(60));
    let measured = reference_histories(&dir, &table, only.as_deref(), &budget);
    summarize(&measured);
    // Beyond Porcupine: c50-bad key by key, every key decided.
    if only.is_none()
        || only
            .as_deref()
            .is_some_and(|o| "kv/c50-bad.txt".contains(o))
    {
        c50_bad_key_by_key(&dir, &budget);
    }
    if std::env::var_os("BENCH_SKIP_1M").is_none() && only.is_none() {
        big_history();
    }
}

/// What the reference histories measured: per family (name, our ms, Porcupine's ms, checks),
/// per history (file, our ms, Porcupine's ms), and how many verdicts differ from EXPECTED.tsv.
struct Measured {
    families: Vec<(String, f64, f64, usize)>,
    rows: Vec<(String, f64, f64)>,
    mismatches: usize,
}

/// Every history of EXPECTED.tsv: the median of 5 checks beside Porcupine's time, a row each.
fn reference_histories(
    dir: &std::path::Path,
    table: &str,
    only: Option<&str>,
    budget: &Budget,
) -> Measured {
    let baseline = common::porcupine_baseline();
    println!(
        "{:<24} {:>8} {:>9} {:>11} {:>11} {:>8} {:>10} {:>10}",
        "history", "verdict", "expected", "ours ms", "porcupine", "ratio", "peak mem", "states"
    );
    let mut m = Measured {
        families: Vec::new(),
        rows: Vec::new(),
        mismatches: 0,
    };
    for line in table.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < 4 {
            continue;
        }
        let (file, model_name, expected) = (c[0], c[1], c[3]);
        if only.is_some_and(|o| !file.contains(o)) {
            continue;
        }
        let model: ModelKind = model_name.parse().expect("model");
        let history = read_history(&dir.join(file), Format::Auto).expect("history");
        let mut times = Vec::new();
        let mut peak = 0;
        let mut last = None;
        for _ in 0..5 {
            let (r, d, p) = measure(|| check(&history, model, budget).expect("check"));
            times.push(d.as_secs_f64() * 1e3);
            peak = peak.max(p);
            last = Some(r);
        }
        times.sort_by(|a, b| a.total_cmp(b));
        let median = times[2];
        let r = last.expect("ran");
        let base = baseline
            .get(&(file.to_string(), model_name.to_string()))
            .copied()
            .unwrap_or(f64::NAN);
        if r.verdict.as_str() != expected {
            m.mismatches += 1;
        }
        println!(
            "{:<24} {:>8} {:>9} {:>11.3} {:>11.3} {:>8.3} {:>10} {:>10}",
            file,
            r.verdict.as_str(),
            expected,
            median,
            base,
            median / base,
            mib(peak),
            r.states_explored
        );
        let family = file.split('/').next().unwrap_or("").to_string();
        match m.families.iter_mut().find(|f| f.0 == family) {
            Some(f) => {
                f.1 += median;
                f.2 += base;
                f.3 += 1;
            }
            None => m.families.push((family, median, base, 1)),
        }
        m.rows.push((file.to_string(), median, base));
    }
    m
}

/// Totals per family, the ten worst ratios, and the verdicts that differ.
fn summarize(m: &Measured) {
    println!();
    println!(
        "{:<10} {:>6} {:>12} {:>14} {:>8}",
        "family", "checks", "ours ms", "porcupine ms", "ratio"
    );
    let (mut so, mut sp, mut sn) = (0.0, 0.0, 0);
    for (f, o, p, n) in &m.families {
        println!("{f:<10} {n:>6} {o:>12.3} {p:>14.3} {:>8.3}", o / p);
        so += o;
        sp += p;
        sn += n;
    }
    println!(
        "{:<10} {sn:>6} {so:>12.3} {sp:>14.3} {:>8.3}",
        "total",
        so / sp
    );
    let mut rows = m.rows.clone();
    rows.sort_by(|a, b| (b.1 / b.2).total_cmp(&(a.1 / a.2)));
    println!("\nworst ratios:");
    for (f, o, p) in rows.iter().take(10) {
        println!("  {f:<24} {o:>9.3} ms vs {p:>9.3} ms  ratio {:.3}", o / p);
    }
    if m.mismatches > 0 {
        println!("\n{} verdicts differ from EXPECTED.tsv", m.mismatches);
    }
}

/// kv/c50-bad.txt, each key's sub-history checked on its own.
fn c50_bad_key_by_key(dir: &std::path::Path, budget: &Budget) {
    println!("\nkv/c50-bad.txt key by key (one thread per check):");
    let history = read_history(&dir.join("kv/c50-bad.txt"), Format::Auto).expect("history");
    let mut keys: Vec<String> = history.ops.iter().filter_map(|o| o.key.clone()).collect();
    keys.sort();
    keys.dedup();
    println!(
        "{:<5} {:>5} {:>8} {:>10} {:>10} {:>10}",
        "key", "ops", "verdict", "ms", "peak mem", "states"
    );
    for k in keys {
        let events: Vec<Event> = history
            .events
            .iter()
            .filter(|e| e.key.as_deref() == Some(&k))
            .cloned()
            .collect();
        let h = History::from_events(events).expect("sub-history");
        let (r, d, p) = measure(|| check(&h, ModelKind::Kv, budget).expect("check"));
        println!(
            "{k:<5} {:>5} {:>8} {:>10.3} {:>10} {:>10}",
            h.ops.len(),
            r.verdict.as_str(),
            d.as_secs_f64() * 1e3,
            mib(p),
            r.states_explored
        );
    }
}

fn big_history() {
    {
        let h = generate_register(100_000, 20, 0.10, 7);
        let budget = Budget::with_timeout(Duration::from_secs(120));
        let (r, d, p) = measure(|| check(&h, ModelKind::CasRegister, &budget).expect("check"));
        println!(
            "\n100,000-operation single-key cas-register history (20 processes, 10% info): {} in {:.2} s, peak memory {}, {} states",
            r.verdict,
            d.as_secs_f64(),
            mib(p),
            r.states_explored
        );
    }
    {
        let h = generate_kv(1_000_000, 1_000, 50, 0.10, 42);
        let info = h
            .ops
            .iter()
            .filter(|o| o.status == checker::Status::Info)
            .count();
        println!(
            "\ngenerated key-value history: {} operations, 1000 keys, 50 processes, {} info",
            h.ops.len(),
            info
        );
        let budget = Budget::with_timeout(Duration::from_secs(120));
        let (r, d, p) = measure(|| check(&h, ModelKind::Kv, &budget).expect("check"));
        println!(
            "1M-operation kv history: {} in {:.2} s, peak memory {} (checker only; the history itself is {}), {} states",
            r.verdict,
            d.as_secs_f64(),
            mib(p),
            mib(common::current()),
            r.states_explored
        );
        if r.verdict != Verdict::Ok {
            println!("unexpected verdict for a history generated from a linearizable store");
        }
    }
}

/// A linearizable in-memory store driven by `processes` clients, each with at most
/// one operation in flight; a fraction of operations end with `info` (applied or
/// not, at random) and their process is replaced by a new one.
fn generate_kv(ops: usize, keys: usize, processes: usize, info: f64, seed: u64) -> History {
    let mut rng = seed;
    let mut rand = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut store: Vec<String> = vec![String::new(); keys];
    let mut events = Vec::with_capacity(ops * 2);
    // Per slot: (process, key, f, value, applied?, result, info?)
    struct Flight {
        process: u64,
        key: usize,
        f: &'static str,
        value: String,
        done: bool,
        result: String,
        info: bool,
    }
    let mut slots: Vec<Option<Flight>> = (0..processes).map(|_| None).collect();
    let mut next_process = processes as u64;
    let mut procs: Vec<u64> = (0..processes as u64).collect();
    let mut started = 0;
    let mut counter = 0u64;
    let mut time = 0u64;
    while started < ops || slots.iter().any(|s| s.is_some()) {
        let i = (rand() % processes as u64) as usize;
        time += 1 + rand() % 1000;
        match slots[i].take() {
            None if started < ops => {
                started += 1;
                counter += 1;
                let key = (rand() % keys as u64) as usize;
                let r = rand() % 100;
                let (f, value) = if r < 45 {
                    ("get", String::new())
                } else if r < 50 {
                    ("put", format!("x {} {} y", procs[i], counter))
                } else {
                    ("append", format!("x {} {} y", procs[i], counter))
                };
                let info = (rand() % 1000) as f64 / 1000.0 < info;
                let mut e = Event::new(
                    procs[i],
                    EventType::Invoke,
                    f,
                    Some(&key.to_string()),
                    if f == "get" {
                        json!(null)
                    } else {
                        json!(value)
                    },
                );
                e.time = time;
                e.index = events.len() as u64;
                events.push(e);
                slots[i] = Some(Flight {
                    process: procs[i],
                    key,
                    f,
                    value,
                    done: false,
                    result: String::new(),
                    info,
                });
            }
            None => {}
            Some(mut fl) => {
                if !fl.done {
                    // Take effect at some point between invocation and completion; an
                    // info operation may also never take effect.
                    if !(fl.info && rand() % 2 == 0) {
                        let s = &mut store[fl.key];
                        match fl.f {
                            "get" => fl.result = s.clone(),
                            "put" => *s = fl.value.clone(),
                            _ => s.push_str(&fl.value),
                        }
                    }
                    fl.done = true;
                    slots[i] = Some(fl);
                    continue;
                }
                let (kind, value) = if fl.info {
                    (EventType::Info, json!(null))
                } else if fl.f == "get" {
                    (EventType::Ok, json!(fl.result))
                } else {
                    (EventType::Ok, json!(fl.value))
                };
                let mut e = Event::new(fl.process, kind, fl.f, Some(&fl.key.to_string()), value);
                e.time = time;
                e.index = events.len() as u64;
                events.push(e);
                if fl.info {
                    procs[i] = next_process;
                    next_process += 1;
                }
            }
        }
    }
    History::from_events(events).expect("generated history is well formed")
}

/// A linearizable single register driven by `processes` clients: reads, writes of
/// unique values and cas from a recently seen value; a fraction end with `info`.
fn generate_register(ops: usize, processes: usize, info: f64, seed: u64) -> History {
    let mut rng = seed;
    let mut rand = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut value = json!(null);
    let mut events = Vec::with_capacity(ops * 2);
    // (process, f, input, result, done, info, failed)
    type Flight = (
        u64,
        &'static str,
        serde_json::Value,
        serde_json::Value,
        bool,
        bool,
        bool,
    );
    let mut slots: Vec<Option<Flight>> = (0..processes).map(|_| None).collect();
    let mut procs: Vec<u64> = (0..processes as u64).collect();
    let mut next_process = processes as u64;
    let (mut started, mut counter) = (0, 0u64);
    while started < ops || slots.iter().any(|s| s.is_some()) {
        let i = (rand() % processes as u64) as usize;
        match slots[i].take() {
            None if started < ops => {
                started += 1;
                counter += 1;
                let r = rand() % 10;
                let (f, input) = if r < 5 {
                    ("read", json!(null))
                } else if r < 8 {
                    ("write", json!(counter))
                } else {
                    let expected = if rand() % 2 == 0 {
                        value.clone()
                    } else {
                        json!(counter - 1)
                    };
                    ("cas", json!([expected, counter]))
                };
                let info = (rand() % 1000) as f64 / 1000.0 < info;
                events.push(Event::new(
                    procs[i],
                    EventType::Invoke,
                    f,
                    Some("r"),
                    input.clone(),
                ));
                slots[i] = Some((procs[i], f, input, json!(null), false, info, false));
            }
            None => {}
            Some(mut fl) => {
                if !fl.4 {
                    if !(fl.5 && rand() % 2 == 0) {
                        match fl.1 {
                            "read" => fl.3 = value.clone(),
                            "write" => value = fl.2.clone(),
                            _ => {
                                if fl.2[0] == value {
                                    value = fl.2[1].clone();
                                } else {
                                    fl.6 = true;
                                }
                            }
                        }
                    }
                    fl.4 = true;
                    slots[i] = Some(fl);
                    continue;
                }
                let (kind, v) = if fl.5 {
                    (EventType::Info, json!(null))
                } else if fl.6 {
                    (EventType::Fail, fl.2.clone())
                } else if fl.1 == "read" {
                    (EventType::Ok, fl.3.clone())
                } else {
                    (EventType::Ok, fl.2.clone())
                };
                events.push(Event::new(fl.0, kind, fl.1, Some("r"), v));
                if fl.5 {
                    procs[i] = next_process;
                    next_process += 1;
                }
            }
        }
    }
    for (i, e) in events.iter_mut().enumerate() {
        e.index = i as u64;
        e.time = i as u64;
    }
    History::from_events(events).expect("generated history is well formed")
}
