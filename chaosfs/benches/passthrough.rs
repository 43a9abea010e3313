//! `cargo bench -p chaosfs`: figures for chaosfs inside a real container (prints, asserts nothing).
//!  - 20 fsyncs of a 4 KiB file: directly on the backing directory, through chaosfs without a
//!    fault, with fsync-delay 200ms, and after `ctl clear`;
//!  - sequential write throughput (no fsync) through chaosfs vs directly on the same directory.
//!
//! "Directly" is the backing bind mount of the same directory (/.chaosfs/backing/0), so both
//! sides write to the same file system (the container's root file system).

#[path = "../tests/common/mod.rs"]
mod common;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing: run only for bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n = common::start_mounted();
    let direct = "/.chaosfs/backing/0";
    let runs = 3;

    let fs = |file: &str| median((0..runs).map(|_| n.fsync_loop_ms(file, 20)).collect());
    let f_direct = fs(&format!("{direct}/f"));
    let f_plain = fs("/data/f");
    n.ctl(&["fsync-delay", "200ms"]);
    let f_delay = n.fsync_loop_ms("/data/f", 20);
    n.ctl(&["clear"]);
    let f_after = fs("/data/f");

    println!(
        "chaosfs passthrough benchmark (container {}, image {})",
        &n.id[..12],
        common::IMAGE
    );
    println!();
    println!("20 x (pwrite 4 KiB + fsync), median of {runs} runs");
    println!(
        "  direct (backing dir, no FUSE)      {f_direct:8.1} ms  ({:.2} ms/fsync)",
        f_direct / 20.0
    );
    println!(
        "  chaosfs, no fault                  {f_plain:8.1} ms  ({:.2} ms/fsync)",
        f_plain / 20.0
    );
    println!(
        "  chaosfs, fsync-delay 200ms         {f_delay:8.1} ms  ({:.2} ms/fsync, 1 run)",
        f_delay / 20.0
    );
    println!(
        "  chaosfs, after ctl clear           {f_after:8.1} ms  ({:.2} ms/fsync)",
        f_after / 20.0
    );
    println!();
    println!("sequential write, 256 MiB, no fsync, median of {runs} runs (MiB/s)");
    for bs in ["128", "1024"] {
        let tput = |file: &str| {
            median(
                (0..runs)
                    .map(|_| {
                        let (v, code) = n.selftest(&["write-loop", file, "256", "--bs", bs]);
                        assert_eq!(code, Some(0), "{v}");
                        v["mib_per_s"].as_f64().unwrap_or(0.0)
                    })
                    .collect(),
            )
        };
        let d = tput(&format!("{direct}/w"));
        let c = tput("/data/w");
        println!(
            "  block {bs:>4} KiB: direct {d:8.0}   chaosfs {c:8.0}   chaosfs/direct {:5.1} %",
            100.0 * c / d.max(1e-9)
        );
    }
    n.ctl(&["lose-unsynced", "on"]);
    let (v, _) = n.selftest(&["write-loop", "/data/w", "256", "--bs", "1024"]);
    println!(
        "  block 1024 KiB, lose-unsynced on (held in memory): chaosfs {:8.0}",
        v["mib_per_s"].as_f64().unwrap_or(0.0)
    );
}
