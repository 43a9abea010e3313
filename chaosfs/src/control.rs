//! Fault state shared by every mount, the `ctl` command grammar, the fault log and the control
//! socket.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use regex::Regex;
use serde_json::{json, Value};

use crate::overlay::Overlay;

pub const DEFAULT_STATE_DIR: &str = "/.chaosfs";
pub const SOCKET_NAME: &str = "ctl.sock";
pub const LOG_NAME: &str = "faults.jsonl";

/// Lock a mutex, ignoring poisoning (a panicking thread must not take the filesystem down).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// (st_dev, st_ino) of a backing file.
pub type Key = (u64, u64);

#[derive(Debug, Clone)]
pub struct Delay {
    pub delay: Duration,
    pub jitter: Duration,
    pub paths: Option<Regex>,
}

#[derive(Debug, Clone)]
pub struct FsyncError {
    /// Fail the next `count` matching fsyncs (None: use `fraction`).
    pub count: Option<u64>,
    pub fraction: Option<f64>,
    pub errno: i32,
    pub paths: Option<Regex>,
}

#[derive(Debug, Clone, Default)]
pub struct Faults {
    pub fsync_delay: Option<Delay>,
    pub fsync_error: Option<FsyncError>,
    pub write_delay: Option<Delay>,
}

/// One parsed `ctl` command.
#[derive(Debug, Clone)]
pub enum Command {
    FsyncDelay(Option<Delay>),
    FsyncError(Option<FsyncError>),
    WriteDelay(Option<Delay>),
    LoseUnsynced(bool),
    Crash,
    Clear,
    Status,
}

pub const CTL_USAGE: &str = "\
chaosfs ctl [--socket PATH] COMMAND
  fsync-delay DURATION [--jitter DURATION] [--paths REGEX]   every fsync/fdatasync/fsyncdir waits
  fsync-delay off
  fsync-error (--count N | --fraction F) [--errno NAME|NUMBER] [--paths REGEX]
  fsync-error off
  write-delay DURATION [--jitter DURATION] [--paths REGEX]
  write-delay off
  lose-unsynced on|off      hold written data in memory until the file is fsynced
  crash                     drop all un-fsynced data and freeze the filesystem
  clear                     remove every fault (lose-unsynced off writes held data back)
  status                    print the state as JSON
DURATION: 200ms, 1.5s, 500us, 0 (a number alone means milliseconds)";

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = s.strip_suffix("ns") {
        (n, 1e-9)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1e-3)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("bad duration {s:?} (expected e.g. 200ms, 1.5s, 500us)"))?;
    let secs = v * mult;
    if !secs.is_finite() || !(0.0..=86400.0).contains(&secs) {
        return Err(format!("duration {s:?} out of range (0 to 24h)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

pub fn parse_errno(s: &str) -> Result<i32, String> {
    if let Ok(n) = s.parse::<i32>() {
        if (1..4096).contains(&n) {
            return Ok(n);
        }
        return Err(format!("errno {n} out of range"));
    }
    let n = match s.to_ascii_uppercase().as_str() {
        "EIO" => libc::EIO,
        "ENOSPC" => libc::ENOSPC,
        "EDQUOT" => libc::EDQUOT,
        "EROFS" => libc::EROFS,
        "EBADF" => libc::EBADF,
        "EINVAL" => libc::EINVAL,
        "EPERM" => libc::EPERM,
        "EACCES" => libc::EACCES,
        "EINTR" => libc::EINTR,
        "EAGAIN" => libc::EAGAIN,
        "ENOMEM" => libc::ENOMEM,
        "EFBIG" => libc::EFBIG,
        "ETIMEDOUT" => libc::ETIMEDOUT,
        _ => {
            return Err(format!(
                "unknown errno {s:?} (use a name like EIO or a number)"
            ))
        }
    };
    Ok(n)
}

pub fn errno_name(n: i32) -> String {
    let names = [
        (libc::EIO, "EIO"),
        (libc::ENOSPC, "ENOSPC"),
        (libc::EDQUOT, "EDQUOT"),
        (libc::EROFS, "EROFS"),
        (libc::EBADF, "EBADF"),
        (libc::EINVAL, "EINVAL"),
        (libc::EPERM, "EPERM"),
        (libc::EACCES, "EACCES"),
        (libc::EINTR, "EINTR"),
        (libc::EAGAIN, "EAGAIN"),
        (libc::ENOMEM, "ENOMEM"),
        (libc::EFBIG, "EFBIG"),
        (libc::ETIMEDOUT, "ETIMEDOUT"),
    ];
    names
        .iter()
        .find(|(v, _)| *v == n)
        .map(|(_, s)| s.to_string())
        .unwrap_or_else(|| n.to_string())
}

fn take_value<'a>(args: &'a [String], i: &mut usize, flag: &str) -> Result<&'a str, String> {
    *i += 1;
    args.get(*i)
        .map(|s| s.as_str())
        .ok_or_else(|| format!("{flag} needs a value"))
}

fn parse_regex(s: &str) -> Result<Regex, String> {
    Regex::new(s).map_err(|e| format!("bad --paths regex {s:?}: {e}"))
}

fn parse_delay(what: &str, args: &[String]) -> Result<Option<Delay>, String> {
    let first = args
        .first()
        .ok_or_else(|| format!("{what} needs a DURATION or off"))?;
    if first == "off" {
        if args.len() > 1 {
            return Err(format!("{what} off takes no options"));
        }
        return Ok(None);
    }
    let mut d = Delay {
        delay: parse_duration(first)?,
        jitter: Duration::ZERO,
        paths: None,
    };
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--jitter" => d.jitter = parse_duration(take_value(args, &mut i, "--jitter")?)?,
            "--paths" => d.paths = Some(parse_regex(take_value(args, &mut i, "--paths")?)?),
            other => return Err(format!("{what}: unknown option {other:?}")),
        }
        i += 1;
    }
    Ok(Some(d))
}

/// Parse the words after `chaosfs ctl` (without `--socket`).
pub fn parse_command(args: &[String]) -> Result<Command, String> {
    let Some(cmd) = args.first() else {
        return Err("no command given".into());
    };
    let rest = &args[1..];
    let no_args = |c: Command| {
        if rest.is_empty() {
            Ok(c)
        } else {
            Err(format!("{cmd} takes no arguments"))
        }
    };
    match cmd.as_str() {
        "fsync-delay" => Ok(Command::FsyncDelay(parse_delay(cmd, rest)?)),
        "write-delay" => Ok(Command::WriteDelay(parse_delay(cmd, rest)?)),
        "fsync-error" | "fail-fsync" => {
            if rest.len() == 1 && rest[0] == "off" {
                return Ok(Command::FsyncError(None));
            }
            let mut e = FsyncError {
                count: None,
                fraction: None,
                errno: libc::EIO,
                paths: None,
            };
            let mut i = 0;
            while i < rest.len() {
                match rest[i].as_str() {
                    "--count" => {
                        let v = take_value(rest, &mut i, "--count")?;
                        e.count = Some(v.parse().map_err(|_| format!("bad --count {v:?}"))?);
                    }
                    "--fraction" => {
                        let v = take_value(rest, &mut i, "--fraction")?;
                        let f: f64 = v.parse().map_err(|_| format!("bad --fraction {v:?}"))?;
                        if !(0.0..=1.0).contains(&f) {
                            return Err(format!("--fraction {v} is not between 0 and 1"));
                        }
                        e.fraction = Some(f);
                    }
                    "--errno" => e.errno = parse_errno(take_value(rest, &mut i, "--errno")?)?,
                    "--paths" => e.paths = Some(parse_regex(take_value(rest, &mut i, "--paths")?)?),
                    other => return Err(format!("fsync-error: unknown option {other:?}")),
                }
                i += 1;
            }
            match (e.count, e.fraction) {
                (None, None) => Err("fsync-error needs --count N or --fraction F".into()),
                (Some(_), Some(_)) => {
                    Err("fsync-error takes --count or --fraction, not both".into())
                }
                _ => Ok(Command::FsyncError(Some(e))),
            }
        }
        "lose-unsynced" => match rest {
            [v] if v == "on" => Ok(Command::LoseUnsynced(true)),
            [v] if v == "off" => Ok(Command::LoseUnsynced(false)),
            _ => Err("lose-unsynced needs on or off".into()),
        },
        "crash" => no_args(Command::Crash),
        "clear" => no_args(Command::Clear),
        "status" => no_args(Command::Status),
        other => Err(format!("unknown command {other:?}")),
    }
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

pub fn now_rfc3339() -> (String, u128) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (rfc3339(d), d.as_nanos())
}

/// UTC RFC 3339 with nanoseconds, from a duration since the Unix epoch.
pub fn rfc3339(d: Duration) -> String {
    let secs = d.as_secs() as i64;
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = if month <= 2 { y + 1 } else { y };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        d.subsec_nanos()
    )
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

fn matches(paths: &Option<Regex>, path: &str) -> bool {
    paths.as_ref().is_none_or(|r| r.is_match(path))
}

/// What to do with one fsync.
pub struct FsyncPlan {
    pub delay: Option<Duration>,
    pub error: Option<i32>,
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

    /// A uniform random number in [0, 1).
    pub fn random(&self) -> f64 {
        let mut s = lock(&self.rng);
        *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn jittered(&self, d: &Delay) -> Duration {
        if d.jitter.is_zero() {
            d.delay
        } else {
            d.delay + d.jitter.mul_f64(self.random())
        }
    }

    /// Append one event to the fault log and to stderr (`chaosfs: {json}`).
    pub fn log_event(&self, event: &str, fault: Option<&str>, path: Option<&str>, detail: Value) {
        let (time, unix_ns) = now_rfc3339();
        let line = json!({
            "time": time,
            "unix_ns": unix_ns as u64,
            "event": event,
            "fault": fault,
            "path": path,
            "detail": detail,
        })
        .to_string();
        let mut log = lock(&self.log);
        if let Some(f) = log.as_mut() {
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
        drop(log);
        eprintln!("chaosfs: {line}");
    }

    pub fn frozen(&self) -> bool {
        self.frozen.load(Ordering::SeqCst)
    }

    /// Keep a reply unanswered forever (the process that asked is "on a crashed machine").
    pub fn park<T: Send + 'static>(&self, reply: T) {
        lock(&self.parked).push(Box::new(reply));
    }

    pub fn plan_fsync(&self, op: &str, path: impl FnOnce() -> String) -> FsyncPlan {
        self.counters.fsyncs.fetch_add(1, Ordering::Relaxed);
        let mut f = lock(&self.faults);
        let mut plan = FsyncPlan {
            delay: None,
            error: None,
        };
        if f.fsync_delay.is_none() && f.fsync_error.is_none() {
            return plan;
        }
        let path = path();
        if let Some(d) = &f.fsync_delay {
            if matches(&d.paths, &path) {
                let delay = self.jittered(d);
                plan.delay = Some(delay);
                self.counters.fsyncs_delayed.fetch_add(1, Ordering::Relaxed);
                self.log_event(
                    "inject",
                    Some("fsync-delay"),
                    Some(&path),
                    json!({"op": op, "delay_ms": delay.as_secs_f64() * 1e3}),
                );
            }
        }
        let mut exhausted = false;
        if let Some(e) = &mut f.fsync_error {
            if matches(&e.paths, &path) {
                let hit = match (e.count.as_mut(), e.fraction) {
                    (Some(c), _) if *c > 0 => {
                        *c -= 1;
                        exhausted = *c == 0;
                        true
                    }
                    (None, Some(fr)) => self.random() < fr,
                    _ => false,
                };
                if hit {
                    plan.error = Some(e.errno);
                    self.counters.fsyncs_failed.fetch_add(1, Ordering::Relaxed);
                    self.log_event(
                        "inject",
                        Some("fsync-error"),
                        Some(&path),
                        json!({"op": op, "errno": e.errno, "error": errno_name(e.errno),
                               "remaining": e.count}),
                    );
                }
            }
        }
        if exhausted {
            f.fsync_error = None;
        }
        plan
    }

    pub fn plan_write(&self, len: usize, path: impl FnOnce() -> String) -> Option<Duration> {
        self.counters.writes.fetch_add(1, Ordering::Relaxed);
        self.counters
            .bytes_written
            .fetch_add(len as u64, Ordering::Relaxed);
        let f = lock(&self.faults);
        let d = f.write_delay.as_ref()?;
        let path = path();
        if !matches(&d.paths, &path) {
            return None;
        }
        let delay = self.jittered(d);
        self.counters.writes_delayed.fetch_add(1, Ordering::Relaxed);
        self.log_event(
            "inject",
            Some("write-delay"),
            Some(&path),
            json!({"bytes": len, "delay_ms": delay.as_secs_f64() * 1e3}),
        );
        Some(delay)
    }

    /// Write every overlay back (not fsynced) and stop holding data back.
    fn lose_unsynced_off(&self) -> Value {
        let mut ovs = lock(&self.overlays);
        self.lose_unsynced.store(false, Ordering::SeqCst);
        let mut written = 0u64;
        let mut failed = Vec::new();
        for (_, d) in ovs.drain() {
            let res = crate::fs::open_backing(&d.fd, libc::O_WRONLY)
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

/// Serve the control socket forever (one JSON array of words per line, one JSON answer per line).
pub fn serve(ctl: Arc<Control>, path: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    std::thread::Builder::new()
        .name("chaosfs-ctl".into())
        .spawn(move || {
            for conn in listener.incoming() {
                match conn {
                    Ok(s) => handle(&ctl, s),
                    Err(e) => eprintln!("chaosfs: control socket accept failed: {e}"),
                }
            }
        })?;
    Ok(())
}

fn handle(ctl: &Control, stream: UnixStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(&stream).take(1 << 16);
    let mut line = String::new();
    let answer = match reader.read_line(&mut line) {
        Err(e) => json!({"ok": false, "error": format!("bad request: {e}")}),
        Ok(_) => match serde_json::from_str::<Vec<String>>(&line) {
            Err(e) => {
                json!({"ok": false, "error": format!("bad request (expected a JSON array of words): {e}")})
            }
            Ok(words) => match parse_command(&words) {
                Err(e) => json!({"ok": false, "error": e}),
                Ok(cmd) => ctl.apply(cmd, &words),
            },
        },
    };
    let mut w = &stream;
    let _ = w.write_all(format!("{answer}\n").as_bytes());
}

use std::io::Read as _;

/// `chaosfs ctl`: send the words, print the answer. Exit 0 ok, 1 refused, 2 usage, 3 unreachable.
pub fn client(socket: &Path, words: &[String]) -> i32 {
    if let Err(e) = parse_command(words) {
        eprintln!("chaosfs ctl: {e}\n\n{CTL_USAGE}");
        return 2;
    }
    let mut stream = match UnixStream::connect(socket) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "chaosfs ctl: cannot connect to {}: {e} (is `chaosfs run` running in this container?)",
                socket.display()
            );
            return 3;
        }
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let req = match serde_json::to_string(words) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("chaosfs ctl: {e}");
            return 2;
        }
    };
    if let Err(e) = stream.write_all(format!("{req}\n").as_bytes()) {
        eprintln!("chaosfs ctl: sending to {}: {e}", socket.display());
        return 3;
    }
    let mut answer = String::new();
    if let Err(e) = stream.read_to_string(&mut answer) {
        eprintln!("chaosfs ctl: reading the answer: {e}");
        return 3;
    }
    let v: Value = serde_json::from_str(answer.trim()).unwrap_or(Value::Null);
    if v["ok"] == Value::Bool(true) {
        println!("{}", answer.trim());
        0
    } else {
        eprintln!(
            "chaosfs ctl: refused: {}",
            v["error"].as_str().unwrap_or(answer.trim())
        );
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("200ms").unwrap(), Duration::from_millis(200));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("50").unwrap(), Duration::from_millis(50));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("abc").is_err());
        assert!(parse_duration("1e30s").is_err());
    }

    #[test]
    fn commands() {
        assert!(matches!(
            parse_command(&w("fsync-delay 200ms --jitter 50ms --paths wal")),
            Ok(Command::FsyncDelay(Some(_)))
        ));
        assert!(matches!(
            parse_command(&w("fsync-delay off")),
            Ok(Command::FsyncDelay(None))
        ));
        assert!(matches!(
            parse_command(&w("fsync-error --count 3 --errno ENOSPC")),
            Ok(Command::FsyncError(Some(FsyncError {
                count: Some(3),
                errno: 28,
                ..
            })))
        ));
        assert!(parse_command(&w("fsync-error")).is_err());
        assert!(parse_command(&w("fsync-error --fraction 2")).is_err());
        assert!(parse_command(&w("fsync-error --count 1 --fraction 0.5")).is_err());
        assert!(parse_command(&w("fsync-delay 1s --paths (")).is_err());
        assert!(parse_command(&w("lose-unsynced maybe")).is_err());
        assert!(parse_command(&w("crash now")).is_err());
        assert!(parse_command(&w("frobnicate")).is_err());
        assert!(parse_command(&[]).is_err());
        assert!(parse_command(&w("fsync-delay --jitter")).is_err());
    }

    #[test]
    fn rfc3339_format() {
        assert_eq!(
            rfc3339(Duration::new(0, 5)),
            "1970-01-01T00:00:00.000000005Z"
        );
        assert_eq!(
            rfc3339(Duration::new(1_709_251_199, 0)),
            "2024-02-29T23:59:59.000000000Z"
        );
    }

    #[test]
    fn fsync_error_count_runs_out() {
        let c = Control::new(None).unwrap();
        let cmd = parse_command(&w("fsync-error --count 2")).unwrap();
        c.apply(cmd, &w("fsync-error --count 2"));
        assert_eq!(c.plan_fsync("fsync", || "/a".into()).error, Some(libc::EIO));
        assert_eq!(c.plan_fsync("fsync", || "/a".into()).error, Some(libc::EIO));
        assert_eq!(c.plan_fsync("fsync", || "/a".into()).error, None);
    }

    #[test]
    fn paths_filter() {
        let c = Control::new(None).unwrap();
        let words = w("fsync-delay 10ms --paths wal$");
        c.apply(parse_command(&words).unwrap(), &words);
        assert!(c.plan_fsync("fsync", || "/d/x.wal".into()).delay.is_some());
        assert!(c.plan_fsync("fsync", || "/d/x.db".into()).delay.is_none());
    }
}
