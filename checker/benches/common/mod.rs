//! What the benchmarks share: a counting global allocator for their peak-memory figures, and
//! the shared reference histories with Porcupine's timings.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub struct Counting;

pub static CURRENT: AtomicUsize = AtomicUsize::new(0);
pub static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        CURRENT.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new > l.size() {
                let now = CURRENT.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                CURRENT.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

/// Bytes allocated now.
pub fn current() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

/// Runs `f` and returns its result, the time taken and the peak bytes allocated
/// above what was live when it started.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Duration, usize) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let t = Instant::now();
    let r = f();
    let d = t.elapsed();
    (r, d, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

pub fn mib(b: usize) -> String {
    if b < 1 << 20 {
        format!("{:.0} KiB", b as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
    }
}

/// The shared reference histories (`$CHAOS_SHARED_DIR/histories/porcupine` when set).
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("CHAOS_SHARED_DIR") {
        Some(d) => PathBuf::from(d).join("histories/porcupine"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/histories/porcupine"),
    }
}

/// Porcupine's time in ms per (file, model), from BASELINE.tsv (empty if it is missing).
pub fn porcupine_baseline() -> HashMap<(String, String), f64> {
    std::fs::read_to_string(shared_dir().join("BASELINE.tsv"))
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            Some((
                (c.first()?.to_string(), c.get(1)?.to_string()),
                c.get(3)?.parse().ok()?,
            ))
        })
        .collect()
}
