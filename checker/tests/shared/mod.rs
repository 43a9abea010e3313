//! Where Porcupine's reference corpus is, for the tests that compare with it: the folder
//! `CHAOS_SHARED_DIR` names, else `../shared` beside the clone. A plain clone has neither; its
//! tests then use the histories the repository carries (checker/tests/histories), and
//! scripts/test says in one line that the corpus comparison did not run.
//! `CHAOS_REQUIRE_SHARED=1` (.ci/run sets it) makes a missing corpus a failure.

use std::path::PathBuf;

/// The corpus folder (`…/histories/porcupine`), or None when there is none and none is
/// required. `CHAOS_SHARED_DIR` naming a folder without the corpus is a failure, not a skip.
pub fn porcupine_corpus() -> Option<PathBuf> {
    let (dir, named) = match std::env::var_os("CHAOS_SHARED_DIR") {
        Some(d) if !d.is_empty() => (PathBuf::from(d).join("histories/porcupine"), true),
        _ => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/histories/porcupine"),
            false,
        ),
    };
    if dir.join("EXPECTED.tsv").is_file() {
        return Some(dir);
    }
    assert!(
        !named,
        "CHAOS_SHARED_DIR names a folder without Porcupine's corpus: no {}",
        dir.join("EXPECTED.tsv").display()
    );
    assert!(
        std::env::var_os("CHAOS_REQUIRE_SHARED").is_none_or(|v| v.is_empty() || v == "0"),
        "CHAOS_REQUIRE_SHARED is set and Porcupine's corpus is not at {} (set CHAOS_SHARED_DIR)",
        dir.display()
    );
    None
}
