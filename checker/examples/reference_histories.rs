//! Writes the generated reference histories of checker/tests/histories/generated/ (and prints
//! their EXPECTED.tsv lines): histories of `checker::generate`, whose verdicts hold by
//! construction. `cargo run --release -p checker --example reference_histories -- DIR`.
//! checker/tests/reference.rs generates them again and compares them byte for byte, so the
//! files cannot drift from the generator.

use checker::generate::{generate, Fault, Spec};
use checker::ModelKind;

/// Every generated reference history: its file name and what makes it.
pub fn specs() -> Vec<(String, Spec)> {
    let mut out = Vec::new();
    for (model, name) in [
        (ModelKind::Register, "register"),
        (ModelKind::CasRegister, "cas-register"),
        (ModelKind::Kv, "kv"),
        (ModelKind::Set, "set"),
    ] {
        for (fault, word) in [
            (Fault::None, "ok"),
            (Fault::StaleRead, "stale-read"),
            (Fault::LostWrite, "lost-write"),
        ] {
            if model == ModelKind::Set && fault == Fault::LostWrite {
                continue; // a set has no overwriting write to lose
            }
            let spec = Spec::new(model, 200, 6, 3, 0.05).fault(fault).seed(7);
            out.push((format!("{name}-{word}.jsonl"), spec));
        }
    }
    out
}

/// A generated history as history.jsonl lines.
pub fn jsonl(spec: &Spec) -> (String, checker::Verdict) {
    let g = generate(spec);
    let mut text = String::new();
    for (i, e) in g.history.events.iter().enumerate() {
        let mut e = e.clone();
        e.index = i as u64;
        text.push_str(&serde_json::to_string(&e).expect("an event serializes"));
        text.push('\n');
    }
    (text, g.expected)
}

#[allow(dead_code)]
fn main() {
    let dir = std::env::args().nth(1).expect("the folder to write into");
    for (file, spec) in specs() {
        let (text, expected) = jsonl(&spec);
        std::fs::write(std::path::Path::new(&dir).join(&file), text).expect("written");
        println!(
            "generated/{file}\t{}\t{}\tchecker::generate, {:?}, seed {}",
            spec.model,
            expected.as_str(),
            spec.fault,
            spec.seed
        );
    }
}
