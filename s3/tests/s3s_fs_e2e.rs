//! The client, the probe and the fencing workload against a real s3s-fs node in Docker
//! (image chaos-s3s-fs:latest, built by images/s3s-fs/build.sh when missing).
//!
//! Needs Docker, like every end-to-end test of the project: it fails (does not skip) when the
//! daemon does not answer.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chaos_s3::{
    run_fencing, BucketStore, FencingConfig, GetCondition, GetResult, PutCondition, S3Client,
    S3Outcome, Timeouts,
};

const IMAGE: &str = "chaos-s3s-fs:latest";
const ACCESS_KEY: &str = "chaos";
const SECRET: &str = "chaos-secret-key";

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default()
}

fn docker(args: &[&str]) -> Output {
    Command::new("docker")
        .args(args)
        .output()
        .expect("the docker client is not installed")
}

fn ensure_image() {
    let ok = docker(&["info", "--format", "{{.ServerVersion}}"]);
    assert!(
        ok.status.success(),
        "Docker is not reachable (this test needs it): {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    if !docker(&["image", "inspect", IMAGE]).status.success() {
        let st = Command::new("bash")
            .arg(workspace().join("images/s3s-fs/build.sh"))
            .status()
            .expect("running images/s3s-fs/build.sh");
        assert!(st.success(), "images/s3s-fs/build.sh failed");
    }
}

/// The container; removed when dropped, also when the test fails.
struct Node {
    id: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = docker(&["rm", "-f", "-v", &self.id]);
    }
}

fn start_node() -> (Node, String) {
    ensure_image();
    let label = format!("chaos.run=s3-test-{}", std::process::id());
    // This process and its start time (field 22 of /proc/self/stat), as the harness labels its
    // runs: a `chaos run` or `chaos clean` at the same time then leaves the container alone.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let start = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().nth(19))
        .unwrap_or("0");
    let pid = format!("chaos.pid={}", std::process::id());
    let pid_start = format!("chaos.pid-start={start}");
    let out = docker(&[
        "run",
        "-d",
        "--label",
        &label,
        "--label",
        &pid,
        "--label",
        &pid_start,
        "-p",
        "127.0.0.1::8014",
        IMAGE,
        "--access-key",
        ACCESS_KEY,
        "--secret-key",
        SECRET,
        "/data",
    ]);
    assert!(
        out.status.success(),
        "docker run {IMAGE} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let node = Node {
        id: String::from_utf8_lossy(&out.stdout).trim().to_string(),
    };
    let port = docker(&["port", &node.id, "8014"]);
    let addr = String::from_utf8_lossy(&port.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    assert!(!addr.is_empty(), "no published port for 8014");
    (node, format!("http://{addr}"))
}

async fn wait_ready(c: &S3Client, bucket: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = c.create_bucket(bucket).await;
        if r.outcome.is_ok() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "s3s-fs did not accept CreateBucket within 30 s: {r:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s3s_fs_conditional_writes() {
    let (node, endpoint) = start_node();
    let c = S3Client::new(
        &endpoint,
        "us-east-1",
        ACCESS_KEY,
        SECRET,
        Timeouts::default(),
    )
    .expect("client");
    assert!(!format!("{c:?}").contains(SECRET));
    wait_ready(&c, "chaos").await;

    let etag = plain_operations(&c).await;
    sequential_conditions(&c, &etag).await;
    let store = BucketStore {
        client: c.clone(),
        bucket: "chaos".into(),
    };
    let probe = chaos_s3::probe_conditional_writes(&store, "probe/").await;
    println!("probe: {}", probe.sentence);
    assert!(probe.enforced, "{probe:#?}");

    concurrent_creates(&c).await;
    fencing_on_the_store(store).await;

    // No credential in the node's log.
    let logs = docker(&["logs", &node.id]);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&logs.stdout),
        String::from_utf8_lossy(&logs.stderr)
    );
    assert!(
        !all.contains(SECRET),
        "the secret key appears in the node log"
    );
    drop(node);
}

/// Put, get (also of an absent key and with If-None-Match), list; returns the object's ETag.
async fn plain_operations(c: &S3Client) -> String {
    let put = c
        .put("chaos", "dir/a key+x", b"one".to_vec(), &PutCondition::None)
        .await;
    assert_eq!(put.status, Some(200), "{put:?}");
    let etag = put.outcome.clone().ok().flatten().expect("an ETag");
    let got = c
        .get("chaos", "dir/a key+x", &GetCondition::default())
        .await;
    let S3Outcome::Ok(GetResult::Found(obj)) = got.outcome else {
        panic!("get: {got:?}")
    };
    assert_eq!(obj.body, b"one");
    assert_eq!(obj.etag.as_deref(), Some(etag.as_str()));
    let absent = c.get("chaos", "nope", &GetCondition::default()).await;
    assert_eq!(
        absent.outcome,
        S3Outcome::Ok(GetResult::Absent),
        "{absent:?}"
    );
    let cond = c
        .get(
            "chaos",
            "dir/a key+x",
            &GetCondition {
                if_none_match: Some(etag.clone()),
                if_match: None,
            },
        )
        .await;
    println!(
        "conditional GET (If-None-Match: current ETag): HTTP {:?}",
        cond.status
    );
    let list = c.list("chaos", "dir/").await;
    let keys: Vec<String> = list
        .outcome
        .clone()
        .ok()
        .expect("list")
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(keys, vec!["dir/a key+x".to_string()], "{list:?}");

    etag
}

/// Sequentially, If-None-Match: * on an existing key is refused, and so is If-Match with a
/// wrong ETag; If-Match with the current one is accepted.
async fn sequential_conditions(c: &S3Client, etag: &str) {
    let inm = c
        .put(
            "chaos",
            "dir/a key+x",
            b"two".to_vec(),
            &PutCondition::IfNoneMatchAny,
        )
        .await;
    println!(
        "If-None-Match: * on an existing key: HTTP {:?} {:?}",
        inm.status, inm.error_code
    );
    assert!(inm.outcome.is_fail(), "{inm:?}");
    let wrong = c
        .put(
            "chaos",
            "dir/a key+x",
            b"two".to_vec(),
            &PutCondition::IfMatch("\"0123\"".into()),
        )
        .await;
    assert!(wrong.outcome.is_fail(), "{wrong:?}");
    let right = c
        .put(
            "chaos",
            "dir/a key+x",
            b"two".to_vec(),
            &PutCondition::IfMatch(etag.to_string()),
        )
        .await;
    assert!(right.outcome.is_ok(), "{right:?}");
    let del = c.delete("chaos", "dir/a key+x").await;
    assert!(del.outcome.is_ok(), "{del:?}");
}

/// Concurrent creates of one key with If-None-Match: *; s3s-fs lets more than one succeed.
async fn concurrent_creates(c: &S3Client) {
    let rounds = 50;
    let writers = 8;
    let mut multi = 0;
    let mut histogram = [0usize; 9];
    for round in 0..rounds {
        let key = format!("race/{round}");
        let mut set = tokio::task::JoinSet::new();
        for w in 0..writers {
            let c = c.clone();
            let key = key.clone();
            set.spawn(async move {
                c.put(
                    "chaos",
                    &key,
                    format!("writer {w}").into_bytes(),
                    &PutCondition::IfNoneMatchAny,
                )
                .await
            });
        }
        let mut ok = 0;
        let mut unknown = 0;
        while let Some(r) = set.join_next().await {
            let r = r.expect("task");
            match &r.outcome {
                S3Outcome::Ok(_) => ok += 1,
                S3Outcome::Fail(_) => {}
                S3Outcome::Info(reason) => {
                    unknown += 1;
                    println!("round {round}: unknown outcome: {reason}")
                }
            }
        }
        histogram[ok.min(8)] += 1;
        if ok > 1 {
            multi += 1;
        }
        assert!(ok + unknown >= 1, "round {round}: every create was refused");
    }
    println!(
        "concurrent creates: {multi} of {rounds} rounds had more than one success with \
         If-None-Match: * ({writers} writers each); successes per round -> rounds: {:?}",
        histogram
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .collect::<Vec<_>>()
    );

    // s3s-fs checks the condition and then writes without a lock. Measured here: 42 to 50 of
    // 50 rounds had more than one success (6 runs); asserting one such round is safe.
    assert!(
        multi > 0,
        "no round of {rounds} had two successful creates: s3s-fs's check-then-write race did \
         not show"
    );
}

/// The fencing workload on the real store (its takeovers race for each term).
async fn fencing_on_the_store(store: BucketStore) {
    let cfg = FencingConfig::default();
    let report = run_fencing(Arc::new(store), &cfg).await;
    match &report.verdict {
        Some(v) => {
            for check in v.checks() {
                println!(
                    "fencing {}: {} - {}",
                    check.name,
                    if check.ok { "ok" } else { "VIOLATION" },
                    check.sentence
                );
            }
        }
        None => println!("fencing refused by the probe: {:?}", report.probe),
    }
    assert!(report.verdict.is_some());
}
