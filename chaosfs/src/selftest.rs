//! Hidden helpers for tests and benchmarks, so they know exactly which syscalls happen
//! (the base image has no python):
//!   chaosfs selftest fsync-loop FILE N          N x (pwrite 4 KiB at 0; fsync)
//!   chaosfs selftest write FILE TEXT [--fsync]  append TEXT (O_APPEND), then fsync
//!   chaosfs selftest write-loop FILE MIB [--bs KIB] [--fsync]   sequential write throughput
//! Each prints one JSON line. Exit 0 ok; 3 the fsync failed (the JSON has its errno); 1 other
//! failures; 2 bad arguments.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::Instant;

use serde_json::json;

fn fail(step: &str, e: &std::io::Error, code: i32) -> i32 {
    println!(
        "{}",
        json!({"ok": false, "step": step, "errno": e.raw_os_error(), "error": e.to_string()})
    );
    code
}

fn open(path: &str, append: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .append(append)
        .truncate(false)
        .mode(0o644)
        .open(path)
}

pub fn main(args: &[OsString]) -> i32 {
    let a: Vec<String> = args
        .iter()
        .map(|s| s.to_string_lossy().to_string())
        .collect();
    let words: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
    match words.as_slice() {
        ["fsync-loop", file, n] => fsync_loop(file, n),
        ["write", file, text, rest @ ..] => write(file, text, rest),
        ["write-loop", file, mib, rest @ ..] => write_loop(file, mib, rest),
        _ => {
            eprintln!("selftest fsync-loop FILE N | write FILE TEXT [--fsync] | write-loop FILE MIB [--bs KIB] [--fsync]");
            2
        }
    }
}

/// `fsync-loop FILE N`: N x (pwrite 4 KiB at 0; fsync).
fn fsync_loop(file: &str, n: &str) -> i32 {
    let Ok(n) = n.parse::<u32>() else {
        eprintln!("selftest fsync-loop: bad count");
        return 2;
    };
    let f = match open(file, false) {
        Ok(f) => f,
        Err(e) => return fail("open", &e, 1),
    };
    let buf = [b'x'; 4096];
    let t = Instant::now();
    for _ in 0..n {
        if let Err(e) = f.write_all_at(&buf, 0) {
            return fail("write", &e, 1);
        }
        if let Err(e) = f.sync_all() {
            return fail("fsync", &e, 3);
        }
    }
    let ms = t.elapsed().as_secs_f64() * 1e3;
    println!("{}", json!({"ok": true, "fsyncs": n, "elapsed_ms": ms}));
    0
}

/// `write FILE TEXT [--fsync]`: append TEXT (O_APPEND), then fsync if asked.
fn write(file: &str, text: &str, rest: &[&str]) -> i32 {
    let do_fsync = match rest {
        [] => false,
        ["--fsync"] => true,
        _ => {
            eprintln!("selftest write FILE TEXT [--fsync]");
            return 2;
        }
    };
    let mut f = match open(file, true) {
        Ok(f) => f,
        Err(e) => return fail("open", &e, 1),
    };
    if let Err(e) = f.write_all(text.as_bytes()) {
        return fail("write", &e, 1);
    }
    if do_fsync {
        if let Err(e) = f.sync_all() {
            return fail("fsync", &e, 3);
        }
    }
    println!(
        "{}",
        json!({"ok": true, "written": text.len(), "fsynced": do_fsync})
    );
    0
}

/// The options of `write-loop`: block size in KiB and whether to fsync at the end.
fn write_loop_options(rest: &[&str]) -> Result<(u64, bool), i32> {
    let mut bs_kib = 128u64;
    let mut do_fsync = false;
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            "--bs" => {
                i += 1;
                match rest.get(i).and_then(|v| v.parse().ok()) {
                    Some(v) if v > 0 => bs_kib = v,
                    _ => {
                        eprintln!("selftest write-loop: bad --bs");
                        return Err(2);
                    }
                }
            }
            "--fsync" => do_fsync = true,
            _ => {
                eprintln!("selftest write-loop FILE MIB [--bs KIB] [--fsync]");
                return Err(2);
            }
        }
        i += 1;
    }
    Ok((bs_kib, do_fsync))
}

/// `write-loop FILE MIB [--bs KIB] [--fsync]`: sequential write throughput of a fresh file
/// (removed before and after).
fn write_loop(file: &str, mib: &str, rest: &[&str]) -> i32 {
    let Ok(mib) = mib.parse::<u64>() else {
        eprintln!("selftest write-loop: bad MiB");
        return 2;
    };
    let (bs_kib, do_fsync) = match write_loop_options(rest) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let _ = std::fs::remove_file(file);
    let mut f = match open(file, false) {
        Ok(f) => f,
        Err(e) => return fail("open", &e, 1),
    };
    let buf = vec![b'y'; (bs_kib * 1024) as usize];
    let total = mib * 1024 * 1024;
    let t = Instant::now();
    let mut done = 0u64;
    while done < total {
        let n = buf.len().min((total - done) as usize);
        if let Err(e) = f.write_all(&buf[..n]) {
            return fail("write", &e, 1);
        }
        done += n as u64;
    }
    if do_fsync {
        if let Err(e) = f.sync_all() {
            return fail("fsync", &e, 3);
        }
    }
    drop(f);
    let s = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(file);
    println!(
        "{}",
        json!({"ok": true, "bytes": total, "block_kib": bs_kib, "elapsed_ms": s * 1e3,
               "mib_per_s": (total as f64 / 1048576.0) / s.max(1e-9)})
    );
    0
}
