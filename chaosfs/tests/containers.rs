//! End-to-end: chaosfs inside real containers (needs Docker and the chaos-base:bookworm image,
//! which is built if missing). Lower bounds on time only: a fault that does nothing fails.

mod common;

use common::{docker, start, start_mounted};

#[test]
fn fsync_delay_slows_every_fsync_and_clearing_restores() {
    let n = start_mounted();
    let before = n.fsync_loop_ms("/data/f", 20);
    n.ctl(&["fsync-delay", "200ms"]);
    let delayed = n.fsync_loop_ms("/data/f", 20);
    n.ctl(&["clear"]);
    let after = n.fsync_loop_ms("/data/f", 20);
    eprintln!("20 fsyncs: before {before:.0} ms, with 200ms delay {delayed:.0} ms, after clear {after:.0} ms");
    assert!(
        delayed >= 20.0 * 200.0,
        "20 fsyncs with a 200 ms delay took {delayed:.0} ms (< 4000 ms): the fault did nothing"
    );
    // Every delayed fsync is logged with its path, in the file and on stderr.
    let log = n.ok(&["cat", "/.chaosfs/faults.jsonl"]);
    let delays = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "inject" && v["fault"] == "fsync-delay" && v["path"] == "/data/f")
        .count();
    assert_eq!(delays, 20, "fault log:\n{log}");
    assert!(n.logs().contains("chaosfs: {"), "no fault lines on stderr");
}

#[test]
fn fsync_delay_paths_filter_and_fsyncdir() {
    let n = start_mounted();
    n.ctl(&["fsync-delay", "300ms", "--paths", "wal"]);
    let other = n.fsync_loop_ms("/data/db", 3);
    let wal = n.fsync_loop_ms("/data/x.wal", 3);
    eprintln!("3 fsyncs: non-matching {other:.0} ms, matching {wal:.0} ms");
    assert!(wal >= 900.0, "matching path not delayed: {wal:.0} ms");
    // fsync of the directory itself (sync FILE opens it and fsyncs) is delayed too.
    n.ctl(&["fsync-delay", "300ms"]);
    let t = std::time::Instant::now();
    n.ok(&["sync", "/data"]);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(
        ms >= 300.0,
        "fsync of the directory not delayed: {ms:.0} ms"
    );
}

#[test]
fn fsync_error_reaches_the_writer() {
    let n = start_mounted();
    n.ctl(&["fsync-error", "--count", "2"]);
    for _ in 0..2 {
        let (v, code) = n.selftest(&["write", "/data/e", "x", "--fsync"]);
        assert_eq!(code, Some(3), "fsync should fail: {v}");
        assert_eq!(v["errno"], libc::EIO, "{v}");
    }
    let (v, code) = n.selftest(&["write", "/data/e", "y", "--fsync"]);
    assert_eq!(code, Some(0), "the third fsync should pass: {v}");
    // Another errno, seen by an ordinary program (dd's conv=fsync).
    n.ctl(&["fsync-error", "--count", "1", "--errno", "ENOSPC"]);
    let out = n.exec(&[
        "dd",
        "if=/dev/zero",
        "of=/data/dd",
        "bs=4k",
        "count=1",
        "conv=fsync",
    ]);
    assert!(!out.status.success(), "dd should fail");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("No space left on device"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // fraction 1.0 fails every fsync
    n.ctl(&["fsync-error", "--fraction", "1"]);
    let (_, code) = n.selftest(&["write", "/data/e", "z", "--fsync"]);
    assert_eq!(code, Some(3));
}

#[test]
fn write_delay_slows_writes() {
    let n = start_mounted();
    n.ctl(&["write-delay", "100ms"]);
    // 1 MiB in 128 KiB writes: at least 8 write requests.
    let (v, code) = n.selftest(&["write-loop", "/data/w", "1", "--bs", "128"]);
    assert_eq!(code, Some(0), "{v}");
    let ms = v["elapsed_ms"].as_f64().unwrap_or(0.0);
    assert!(ms >= 800.0, "8 writes with 100 ms delay took {ms:.0} ms");
}

#[test]
fn lose_unsynced_keeps_exactly_the_fsynced_bytes_across_a_crash() {
    let n = start_mounted();
    n.ctl(&["lose-unsynced", "on"]);
    // a: A fsynced, B not.   b: A and B fsynced.   c: created, written, never fsynced.
    // d: written to a temporary name and renamed without fsync (metadata is kept, data is not).
    n.selftest(&["write", "/data/a", "AAAA", "--fsync"]);
    n.selftest(&["write", "/data/a", "BBBB"]);
    n.selftest(&["write", "/data/b", "AAAA", "--fsync"]);
    n.selftest(&["write", "/data/b", "BBBB", "--fsync"]);
    n.selftest(&["write", "/data/c", "CCCC"]);
    n.ok(&[
        "sh",
        "-c",
        "echo hello > /data/d.tmp && mv /data/d.tmp /data/d",
    ]);
    // Without a crash, reads see the cached data.
    assert_eq!(n.ok(&["cat", "/data/a"]), "AAAABBBB");
    assert_eq!(n.ok(&["cat", "/data/d"]), "hello\n");
    let st = n.ctl(&["status"]);
    assert_eq!(st["status"]["unsynced"]["files"], 3, "{st}");
    // The backing files already hold only what was fsynced.
    assert_eq!(n.ok(&["cat", "/.chaosfs/backing/0/a"]), "AAAA");

    let r = n.ctl(&["crash"]);
    assert_eq!(r["result"]["dropped_bytes"], 4 + 4 + 6, "{r}");
    assert_eq!(n.ok(&["cat", "/.chaosfs/backing/0/a"]), "AAAA");
    assert!(docker(&["kill", &n.id]).status.success());
    assert!(docker(&["start", &n.id]).status.success());
    n.wait_ready();
    assert_eq!(n.ok(&["cat", "/data/a"]), "AAAA");
    assert_eq!(n.ok(&["cat", "/data/b"]), "AAAABBBB");
    assert_eq!(n.ok(&["cat", "/data/c"]), "");
    assert_eq!(n.ok(&["cat", "/data/d"]), "");
    // The crash is in the fault log, which survives the restart.
    let log = n.ok(&["cat", "/.chaosfs/faults.jsonl"]);
    assert!(log.contains("\"event\":\"crash\""), "{log}");
    assert!(
        log.contains("\"fault\":\"lose-unsynced\",\"path\":\"/data/a\""),
        "{log}"
    );
}

#[test]
fn lose_unsynced_off_writes_held_data_back() {
    let n = start_mounted();
    n.ctl(&["lose-unsynced", "on"]);
    n.selftest(&["write", "/data/a", "AAAA"]);
    n.ok(&[
        "sh",
        "-c",
        "printf 0123456789 > /data/t && truncate -s 4 /data/t",
    ]);
    assert_eq!(n.ok(&["cat", "/.chaosfs/backing/0/a"]), "");
    assert_eq!(n.ok(&["cat", "/data/t"]), "0123");
    n.ctl(&["lose-unsynced", "off"]);
    assert_eq!(n.ok(&["cat", "/.chaosfs/backing/0/a"]), "AAAA");
    assert_eq!(n.ok(&["cat", "/.chaosfs/backing/0/t"]), "0123");
}

#[test]
fn existing_content_is_kept_and_ownership_follows_the_caller() {
    let n = start(
        &[
            "sh",
            "-c",
            "mkdir -p /data/sub && echo pre > /data/sub/pre && exec /chaosfs run --dir /data -- sleep infinity",
        ],
        true,
    );
    n.wait_ready();
    assert_eq!(n.ok(&["cat", "/data/sub/pre"]), "pre\n");
    let mounts = n.ok(&["cat", "/proc/mounts"]);
    assert!(mounts.contains("chaosfs /data fuse"), "{mounts}");
    // A non-root writer: files get its uid, and permissions are enforced.
    n.ok(&["sh", "-c", "mkdir /data/u && chown nobody /data/u"]);
    n.ok(&[
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "sh",
        "-c",
        "echo x > /data/u/f && ln -s f /data/u/l && mv /data/u/f /data/u/g",
    ]);
    assert_eq!(n.ok(&["stat", "-c", "%u", "/data/u/g"]).trim(), "65534");
    assert_eq!(n.ok(&["readlink", "/data/u/l"]).trim(), "f");
    let denied = n.exec(&[
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "sh",
        "-c",
        "echo x > /data/sub/pre",
    ]);
    assert!(
        !denied.status.success(),
        "a non-root user could write a root file"
    );
}

#[test]
fn run_passes_exit_codes_and_signals() {
    let n = start(
        &[
            "/chaosfs", "run", "--dir", "/data", "--", "sh", "-c", "exit 7",
        ],
        true,
    );
    let out = docker(&["wait", &n.id]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "7",
        "{}",
        n.logs()
    );

    let n = start(
        &["/chaosfs", "run", "--dir", "/data", "--", "no-such-command"],
        true,
    );
    docker(&["wait", &n.id]);
    assert_eq!(n.exit_code(), Some(127), "{}", n.logs());

    // docker stop sends SIGTERM to PID 1 (chaosfs), which forwards it to sleep: 128 + 15.
    // (Had it not been forwarded, docker would SIGKILL after the timeout: 137.)
    let n = start_mounted();
    assert!(docker(&["stop", "-t", "30", &n.id]).status.success());
    assert_eq!(n.exit_code(), Some(143), "{}", n.logs());

    // Without /dev/fuse and SYS_ADMIN chaosfs says what is missing and exits 125.
    let n = start(&["/chaosfs", "run", "--dir", "/data", "--", "true"], false);
    docker(&["wait", &n.id]);
    assert_eq!(n.exit_code(), Some(125), "{}", n.logs());
    assert!(n.logs().contains("SYS_ADMIN"), "{}", n.logs());
}
