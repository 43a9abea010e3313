//! Fault state shared by every mount and the control socket: `command` parses the `ctl`
//! grammar, `inject` decides which faults hit each request, `log` writes the fault log and
//! `socket` serves and asks the control socket.

mod command;
mod inject;
mod log;
mod socket;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::overlay::Overlay;
use command::{errno_name, Delay, FsyncError};

pub use command::{parse_command, Command, CTL_USAGE};
pub use socket::{client, serve};

pub const DEFAULT_STATE_DIR: &str = "/.chaosfs";
pub const SOCKET_NAME: &str = "ctl.sock";
pub const LOG_NAME: &str = "faults.jsonl";

/// Lock a mutex, ignoring poisoning (a panicking thread must not take the filesystem down).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// (st_dev, st_ino) of a backing file.
pub type Key = (u64, u64);

#[derive(Debug, Clone, Default)]
pub struct Faults {
    pub fsync_delay: Option<Delay>,
    pub fsync_error: Option<FsyncError>,
    pub write_delay: Option<Delay>,
}

/// A file's held-back data, with what is needed to write it back.
pub struct Dirty {
    pub overlay: Overlay,
    /// O_PATH descriptor of the backing file.
    pub fd: Arc<OwnedFd>,
    /// Path as the application sees it (at the time the first byte was held back).
    pub path: String,
}

#[derive(Default)]
pub struct Counters {
    pub fsyncs: AtomicU64,
    pub fsyncs_delayed: AtomicU64,
    pub fsyncs_failed: AtomicU64,
    pub writes: AtomicU64,
    pub writes_delayed: AtomicU64,
    pub bytes_written: AtomicU64,
}

pub struct Mounted {
    pub dir: PathBuf,
    pub backing: PathBuf,
}

/// State shared by all mounts and the control socket.
pub struct Control {
    pub faults: Mutex<Faults>,
    pub lose_unsynced: AtomicBool,
    /// Held-back data per backing inode; also the lock that orders fsync against crash.
    pub overlays: Mutex<HashMap<Key, Dirty>>,
    pub frozen: AtomicBool,
    /// Replies to requests that arrived after a crash: never answered.
    parked: Mutex<Vec<Box<dyn Send>>>,
    log: Mutex<Option<File>>,
    rng: Mutex<u64>,
    pub counters: Counters,
    pub mounts: Mutex<Vec<Mounted>>,
    pub log_path: Option<PathBuf>,
}

fn delay_json(d: &Option<Delay>) -> Value {
    match d {
        None => Value::Null,
        Some(d) => json!({
            "delay_ms": d.delay.as_secs_f64() * 1e3,
            "jitter_ms": d.jitter.as_secs_f64() * 1e3,
            "paths": d.paths.as_ref().map(|r| r.as_str().to_string()),
        }),
    }
}

impl Control {
    pub fn new(log_path: Option<PathBuf>) -> std::io::Result<Arc<Control>> {
        let log = match &log_path {
            Some(p) => {
                use std::os::unix::fs::OpenOptionsExt;
                Some(
                    OpenOptions::new()
                        .create(true)
                        .append(true)
                        .mode(0o644)
                        .open(p)?,
                )
            }
            None => None,
        };
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as u64
            ^ ((std::process::id() as u64) << 32);
        Ok(Arc::new(Control {
            faults: Mutex::new(Faults::default()),
            lose_unsynced: AtomicBool::new(false),
            overlays: Mutex::new(HashMap::new()),
            frozen: AtomicBool::new(false),
            parked: Mutex::new(Vec::new()),
            log: Mutex::new(log),
            rng: Mutex::new(seed),
            counters: Counters::default(),
            mounts: Mutex::new(Vec::new()),
            log_path,
        }))
    }

    pub fn frozen(&self) -> bool {
        self.frozen.load(Ordering::SeqCst)
    }

    /// Keep a reply unanswered forever (the process that asked is "on a crashed machine").
    pub fn park<T: Send + 'static>(&self, reply: T) {
        lock(&self.parked).push(Box::new(reply));
    }

    /// Write every overlay back (not fsynced) and stop holding data back.
    fn lose_unsynced_off(&self) -> Value {
        let mut ovs = lock(&self.overlays);
        self.lose_unsynced.store(false, Ordering::SeqCst);
        let mut written = 0u64;
        let mut failed = Vec::new();
        for (_, d) in ovs.drain() {
            let res = crate::backing::open_backing(&d.fd, libc::O_WRONLY)
                .and_then(|f| d.overlay.write_back(&f));
            match res {
                Ok(()) => written += d.overlay.dirty_bytes(),
                Err(e) => failed.push(json!({"path": d.path, "error": e.to_string()})),
            }
        }
        json!({"written_back_bytes": written, "failed": failed})
    }

    fn crash(&self) -> Value {
        let mut ovs = lock(&self.overlays);
        self.frozen.store(true, Ordering::SeqCst);
        let mut files = 0u64;
        let mut bytes = 0u64;
        for (_, d) in ovs.drain() {
            let b = d.overlay.dirty_bytes();
            files += 1;
            bytes += b;
            self.log_event(
                "inject",
                Some("lose-unsynced"),
                Some(&d.path),
                json!({"dropped_bytes": b, "logical_size": d.overlay.size,
                       "kept_size": d.overlay.cut}),
            );
        }
        json!({"dropped_files": files, "dropped_bytes": bytes})
    }

    pub fn status(&self) -> Value {
        let f = lock(&self.faults).clone();
        let (files, bytes) = {
            let ovs = lock(&self.overlays);
            (
                ovs.len(),
                ovs.values().map(|d| d.overlay.dirty_bytes()).sum::<u64>(),
            )
        };
        let c = &self.counters;
        let mounts: Vec<Value> = lock(&self.mounts)
            .iter()
            .map(|m| json!({"dir": m.dir, "backing": m.backing}))
            .collect();
        json!({
            "faults": {
                "fsync_delay": delay_json(&f.fsync_delay),
                "fsync_error": f.fsync_error.as_ref().map(|e| json!({
                    "count": e.count, "fraction": e.fraction, "errno": e.errno,
                    "error": errno_name(e.errno),
                    "paths": e.paths.as_ref().map(|r| r.as_str().to_string()),
                })),
                "write_delay": delay_json(&f.write_delay),
                "lose_unsynced": self.lose_unsynced.load(Ordering::SeqCst),
            },
            "crashed": self.frozen(),
            "unsynced": {"files": files, "bytes": bytes},
            "counters": {
                "fsyncs": c.fsyncs.load(Ordering::Relaxed),
                "fsyncs_delayed": c.fsyncs_delayed.load(Ordering::Relaxed),
                "fsyncs_failed": c.fsyncs_failed.load(Ordering::Relaxed),
                "writes": c.writes.load(Ordering::Relaxed),
                "writes_delayed": c.writes_delayed.load(Ordering::Relaxed),
                "bytes_written": c.bytes_written.load(Ordering::Relaxed),
            },
            "mounts": mounts,
            "log": self.log_path,
            "pid": std::process::id(),
        })
    }

    /// Apply a command; returns the JSON answer (`{"ok":true,...}`).
    pub fn apply(&self, cmd: Command, words: &[String]) -> Value {
        let ctl_detail = json!({"command": words});
        let extra = match cmd {
            Command::Status => return json!({"ok": true, "status": self.status()}),
            Command::FsyncDelay(d) => {
                lock(&self.faults).fsync_delay = d;
                Value::Null
            }
            Command::FsyncError(e) => {
                lock(&self.faults).fsync_error = e;
                Value::Null
            }
            Command::WriteDelay(d) => {
                lock(&self.faults).write_delay = d;
                Value::Null
            }
            Command::LoseUnsynced(true) => {
                self.lose_unsynced.store(true, Ordering::SeqCst);
                Value::Null
            }
            Command::LoseUnsynced(false) => self.lose_unsynced_off(),
            Command::Clear => {
                *lock(&self.faults) = Faults::default();
                self.lose_unsynced_off()
            }
            Command::Crash => self.crash(),
        };
        let name = words.first().map(|s| s.as_str()).unwrap_or("");
        let event = if name == "crash" { "crash" } else { "ctl" };
        let mut detail = ctl_detail;
        if !extra.is_null() {
            detail["result"] = extra.clone();
        }
        self.log_event(event, Some(name), None, detail);
        json!({"ok": true, "result": extra, "status": self.status()})
    }
}
