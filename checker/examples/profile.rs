//! Repeats one check many times (for profilers): `cargo run --release -p checker --example profile -- FILE MODEL [N]`.
use checker::linearizable::{check, Budget};
use checker::{read_history, Format};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (Some(file), Some(model)) = (a.get(1), a.get(2)) else {
        eprintln!("usage: profile FILE MODEL [N] [EXPLAIN=1] [THREADS=0]");
        std::process::exit(254);
    };
    let n: usize = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let budget = Budget {
        explain: a.get(4).map(|s| s != "0").unwrap_or(true),
        threads: a.get(5).and_then(|s| s.parse().ok()).unwrap_or(0),
        ..Budget::default()
    };
    let h = read_history(std::path::Path::new(file), Format::Auto).expect("history");
    let model = model.parse().expect("model");
    let t = std::time::Instant::now();
    let mut v = None;
    for _ in 0..n {
        v = Some(check(&h, model, &budget).expect("check").verdict);
    }
    if std::env::var_os("PRINT").is_some() {
        let r = check(&h, model, &budget).expect("check");
        for p in &r.partitions {
            println!(
                "key {:?} {} ops={} states={} {}",
                p.key,
                p.verdict,
                p.operations,
                p.states_explored,
                p.explanation
                    .as_ref()
                    .map(|e| format!("confirmed={} {}", e.prefix_confirmed, e.message))
                    .unwrap_or_default()
            );
        }
    }
    println!(
        "{:?} {:.3} ms per check",
        v,
        t.elapsed().as_secs_f64() * 1e3 / n as f64
    );
}
