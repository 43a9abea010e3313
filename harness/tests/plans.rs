//! Every shipped scenario plans as it did: plan.json (what `chaos run` writes) on seeds 1, 7
//! and 42, against harness/tests/fixtures/plans.txt (a hash per plan). A change to the fault
//! registry, the plan's draws or a scenario that moves a plan fails here; a scenario changed
//! on purpose is re-recorded with `CHAOS_BLESS_PLANS=1`. No Docker needed.

use std::path::{Path, PathBuf};

const SEEDS: [u64; 3] = [1, 7, 42];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// FNV-1a, 64 bits: stable across Rust versions.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn shipped_plans_do_not_move() {
    let mut lines = Vec::new();
    let mut systems: Vec<PathBuf> = std::fs::read_dir(repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    systems.sort();
    for system in systems {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&system)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        for path in files {
            let loaded = chaos::load::load(&path).unwrap_or_else(|e| panic!("{path:?}: {e:?}"));
            let name = path.strip_prefix(repo()).unwrap().display().to_string();
            for seed in SEEDS {
                let plan = chaos::scenario::plan::make_plan(&loaded.spec, seed);
                let json = serde_json::to_string_pretty(&plan).unwrap();
                lines.push(format!("{name} s{seed} {:016x}", fnv(json.as_bytes())));
            }
        }
    }
    let golden_path = repo().join("harness/tests/fixtures/plans.txt");
    let golden = std::fs::read_to_string(&golden_path).unwrap();
    let header: Vec<&str> = golden.lines().filter(|l| l.starts_with('#')).collect();
    if std::env::var_os("CHAOS_BLESS_PLANS").is_some() {
        let text = header.join("\n") + "\n" + &lines.join("\n") + "\n";
        std::fs::write(&golden_path, text).unwrap();
        return;
    }
    let expected: Vec<&str> = golden.lines().filter(|l| !l.starts_with('#')).collect();
    let moved: Vec<String> = lines
        .iter()
        .filter(|l| !expected.contains(&l.as_str()))
        .cloned()
        .collect();
    assert!(
        moved.is_empty() && lines.len() == expected.len(),
        "plans moved (CHAOS_BLESS_PLANS=1 if on purpose): {moved:?}"
    );
}
