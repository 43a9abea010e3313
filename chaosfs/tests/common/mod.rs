//! Helpers for tests and benchmarks that run chaosfs inside real containers (docker CLI).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

pub const IMAGE: &str = "chaos-base:bookworm";

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default()
}

/// The statically linked chaosfs: $CHAOSFS_STATIC_BIN, or built by chaosfs/build-static.sh.
pub fn static_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("CHAOSFS_STATIC_BIN") {
            return PathBuf::from(p);
        }
        let script = workspace().join("chaosfs/build-static.sh");
        let mut cmd = Command::new("bash");
        cmd.arg(&script);
        if std::env::var_os("CARGO_TARGET_DIR").is_none() {
            // Same target dir as this test binary (the static build uses its own profile dir).
            let exe = PathBuf::from(env!("CARGO_BIN_EXE_chaosfs"));
            if let Some(t) = exe.parent().and_then(|p| p.parent()) {
                cmd.env("CARGO_TARGET_DIR", t);
            }
        }
        let out = cmd.output().expect("running chaosfs/build-static.sh");
        assert!(
            out.status.success(),
            "chaosfs/build-static.sh failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string())
    })
    .clone()
}

pub fn docker(args: &[&str]) -> Output {
    Command::new("docker")
        .args(args)
        .output()
        .expect("the docker client is not installed")
}

pub fn ensure_image() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let ok = docker(&["info", "--format", "{{.ServerVersion}}"]);
        assert!(
            ok.status.success(),
            "Docker is not reachable (these tests need it): {}",
            String::from_utf8_lossy(&ok.stderr)
        );
        if !docker(&["image", "inspect", IMAGE]).status.success() {
            let st = Command::new("bash")
                .arg(workspace().join("images/base/build.sh"))
                .status()
                .expect("running images/base/build.sh");
            assert!(st.success(), "images/base/build.sh failed");
        }
    });
}

pub fn run_label() -> String {
    format!("chaos.run=chaosfs-test-{}", std::process::id())
}

/// `--label` arguments naming this test process and its start time (field 22 of
/// /proc/self/stat), as the harness labels its runs: a `chaos run` or `chaos clean` at the same
/// time then sees these containers as a live run's and leaves them alone.
pub fn owner_labels() -> Vec<String> {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rfind(')').map_or("", |i| &stat[i + 1..]);
    let start = after_name.split_whitespace().nth(19).unwrap_or("0");
    vec![
        "--label".into(),
        format!("chaos.pid={}", std::process::id()),
        "--label".into(),
        format!("chaos.pid-start={start}"),
    ]
}

/// A container running chaosfs; removed when dropped (also when a test fails).
pub struct Node {
    pub id: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = docker(&["rm", "-f", "-v", &self.id]);
    }
}

/// Start a container from the base image with chaosfs mounted at /chaosfs and `cmd` as its
/// command; with `fuse` the container gets /dev/fuse and SYS_ADMIN.
pub fn start(cmd: &[&str], fuse: bool) -> Node {
    ensure_image();
    let bin = static_bin();
    let vol = format!("{}:/chaosfs:ro", bin.display());
    let label = run_label();
    let owner = owner_labels();
    let mut args = vec!["run", "-d", "--label", &label, "-v", &vol];
    args.extend(owner.iter().map(String::as_str));
    if fuse {
        args.extend(["--device", "/dev/fuse", "--cap-add", "SYS_ADMIN"]);
    }
    args.push(IMAGE);
    args.extend(cmd);
    let out = docker(&args);
    assert!(
        out.status.success(),
        "docker run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Node {
        id: String::from_utf8_lossy(&out.stdout).trim().to_string(),
    }
}

/// A container whose PID 1 is `chaosfs run --dir /data -- sleep infinity`, ready for ctl.
pub fn start_mounted() -> Node {
    let n = start(
        &[
            "/chaosfs", "run", "--dir", "/data", "--", "sleep", "infinity",
        ],
        true,
    );
    n.wait_ready();
    n
}

impl Node {
    pub fn exec(&self, args: &[&str]) -> Output {
        let mut a = vec!["exec", self.id.as_str()];
        a.extend(args);
        docker(&a)
    }

    pub fn sh(&self, script: &str) -> Output {
        self.exec(&["sh", "-c", script])
    }

    /// Run and require success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.exec(args);
        assert!(
            out.status.success(),
            "{args:?} failed ({:?}): {}{}\nlogs:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.logs()
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    pub fn ctl(&self, words: &[&str]) -> Value {
        let mut a = vec!["/chaosfs", "ctl"];
        a.extend(words);
        serde_json::from_str(self.ok(&a).trim()).expect("ctl answers JSON")
    }

    /// Run a selftest helper; returns its JSON line and exit code.
    pub fn selftest(&self, words: &[&str]) -> (Value, Option<i32>) {
        let mut a = vec!["/chaosfs", "selftest"];
        a.extend(words);
        let out = self.exec(&a);
        let v = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim())
            .unwrap_or(Value::Null);
        (v, out.status.code())
    }

    pub fn logs(&self) -> String {
        let out = docker(&["logs", &self.id]);
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    pub fn wait_ready(&self) {
        let t = Instant::now();
        loop {
            let out = self.exec(&["/chaosfs", "ctl", "status"]);
            if out.status.success() {
                return;
            }
            if t.elapsed() > Duration::from_secs(30) {
                panic!(
                    "chaosfs did not become ready in 30 s: {}\nlogs:\n{}",
                    String::from_utf8_lossy(&out.stderr),
                    self.logs()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn exit_code(&self) -> Option<i64> {
        let out = docker(&["inspect", "-f", "{{.State.ExitCode}}", &self.id]);
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }

    pub fn fsync_loop_ms(&self, file: &str, n: u32) -> f64 {
        let (v, code) = self.selftest(&["fsync-loop", file, &n.to_string()]);
        assert_eq!(code, Some(0), "fsync-loop failed: {v}");
        v["elapsed_ms"].as_f64().expect("elapsed_ms")
    }
}
