//! End-to-end tests of Apache Ozone (3 OMs in Ratis HA, SCM, 3 datanodes, s3g) built from its
//! released jars on Maven Central (images/ozone/build.sh, chaos-ozone:2.2.0): the retry cache
//! lost when every OM restarts (HDDS-16743) must show on the live cluster, with a rename
//! answered OK before the restart and the same call answered KEY_ALREADY_EXISTS after it; the
//! control without the restart must pass with retried calls to check. Docker and Maven Central
//! are required; the image is built when missing (a few minutes the first time). Nothing here
//! skips.

mod common;

use std::collections::HashMap;
use std::process::Command;
use std::sync::Mutex;

use chaos::run_folder::{read_faults, FaultEvent, Phase};
use common::{lines, play, repo, result};
use serde_json::Value;

/// One Ozone cluster at a time: eight JVMs on two cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// chaos-ozone:2.2.0, built with images/ozone/build.sh if it is missing.
fn ensure_image() {
    let present = || {
        Command::new("docker")
            .args(["image", "inspect", "chaos-ozone:2.2.0"])
            .output()
            .expect("the docker client")
            .status
            .success()
    };
    if present() {
        return;
    }
    eprintln!("chaos-ozone:2.2.0 is missing: images/ozone/build.sh (mvn, then docker build)");
    let built = Command::new("bash")
        .arg(repo().join("images/ozone/build.sh"))
        .env("OZONE_VERSION", "2.2.0")
        .output()
        .expect("bash runs images/ozone/build.sh");
    assert!(
        built.status.success() && present(),
        "chaos-ozone:2.2.0 is missing and images/ozone/build.sh could not build it ({})\n\
         --- stdout\n{}--- stderr\n{}",
        built.status,
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
}

/// The completions of history.jsonl that carry a retry identity, by (client, call).
fn answers_by_call(history: &[Value]) -> HashMap<(String, String), Vec<&Value>> {
    let mut calls: HashMap<(String, String), Vec<&Value>> = HashMap::new();
    for event in history.iter().filter(|e| e["type"] != "invoke") {
        if let (Some(client), Some(call)) = (event["client"].as_str(), event["call"].as_str()) {
            calls
                .entry((client.to_string(), call.to_string()))
                .or_default()
                .push(event);
        }
    }
    calls
}

#[test]
fn retry_after_restart_answers_an_acknowledged_rename_key_already_exists() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    ensure_image();
    let (output, run) = play("ozone", "scenarios/ozone/retry-after-restart.yaml", &[]);
    assert_eq!(output.status.code(), Some(1), "the bug must show");

    // In history.jsonl: a rename answered OK before every OM restarted, and the very same call
    // (client id and call id) sent again after the restart and answered "already exists".
    let history = lines(&run, "history.jsonl");
    let restart = read_faults(&run)
        .into_iter()
        .find(|f| f.action == "restart" && f.phase == Phase::Apply)
        .expect("the restart of every OM is in faults.jsonl");
    assert!(restart.ok(), "{restart:?}");
    assert_eq!(restart.targets, ["om1", "om2", "om3"]);
    let restarted_at = restart.time;
    let calls = answers_by_call(&history);
    let pairs: Vec<_> = calls
        .values()
        .filter(|answers| {
            let ok_before = answers.iter().any(|e| {
                e["f"] == "cas" && e["type"] == "ok" && e["time"].as_u64() < Some(restarted_at)
            });
            let refused_after = answers.iter().any(|e| {
                e["f"] == "resend"
                    && e["type"] == "fail"
                    && e["time"].as_u64() > Some(restarted_at)
                    && e["error"]
                        .as_str()
                        .is_some_and(|m| m.contains("already exists"))
            });
            ok_before && refused_after
        })
        .collect();
    assert!(
        !pairs.is_empty(),
        "no call answered OK before the restart and KEY_ALREADY_EXISTS after it"
    );

    // The verdict names such a call.
    let r = result(&run);
    let retry = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "retry-consistent")
        .unwrap();
    assert_eq!(retry["verdict"], "illegal", "{}", retry["summary"]);
    assert!(
        retry["detail"]["inconsistent"].as_u64() >= Some(1),
        "{}",
        retry["detail"]
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("answered differently"), "{stdout}");
    assert!(stdout.contains("fail: already exists"), "{stdout}");
}

#[test]
fn retry_after_reset_control_passes_with_retried_calls_to_check() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    ensure_image();
    let (output, run) = play(
        "ozone",
        "scenarios/ozone/retry-after-reset-control.yaml",
        &[],
    );
    assert_eq!(output.status.code(), Some(0));
    let r = result(&run);
    let checks = r["checks"].as_array().unwrap();
    let retry = checks
        .iter()
        .find(|c| c["check"] == "retry-consistent")
        .unwrap();
    assert_eq!(retry["verdict"], "ok");
    // A pass means something only if calls were retried and renames went through.
    let retried = retry["detail"]["duplicates"].as_array().unwrap().len();
    assert!(retried >= 1, "no call was retried: {}", retry["summary"]);
    let history = lines(&run, "history.jsonl");
    let ok = history
        .iter()
        .filter(|e| e["f"] == "cas" && e["type"] == "ok")
        .count();
    assert!(ok >= 100, "only {ok} renames answered OK");
}

/// An Ozone version Maven Central does not have: one line that says so, exit 255, and no
/// container left behind.
#[test]
fn an_unknown_ozone_version_exits_255_saying_maven_central_has_none() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .current_dir(repo())
        .args(["run", "scenarios/ozone/retry-after-reset-control.yaml"])
        .arg("--out")
        .arg(repo().join(format!(
            "target/e2e-runs/ozone-unknown-{}",
            std::process::id()
        )))
        .env("OZONE_VERSION", "0.0.1-chaos-missing")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{stdout}\n{stderr}");
    let line = stdout.lines().last().unwrap_or_default();
    assert!(
        line.contains("Maven Central has no Apache Ozone 0.0.1-chaos-missing"),
        "{stdout}"
    );
    let left = Command::new("docker")
        .args(["ps", "-aq", "--filter", "label=chaos.run"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&left.stdout).trim().is_empty());
}

/// HDDS-17431's scenario on a release: the build lacks the client switch the bug needs, so the
/// run stops before the cluster starts (exit 2, not reached), names the key and the build that
/// has it, records the key the build does define as reached, and leaves no history and no
/// container.
#[test]
fn stream_close_on_a_release_stops_before_the_cluster_saying_it_needs_master() {
    ensure_image();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (out, run) = play(
        "ozone-gate",
        "scenarios/ozone/stream-close-closed-container.yaml",
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("does not define ozone.client.datastream.putblock.on.close.enabled")
            && stderr.contains("Ozone master"),
        "{stderr}"
    );
    let r = result(&run);
    assert_eq!(r["confirmation"], "not-reached", "{r}");
    let pre = |name: &str| {
        r["preconditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no precondition {name}: {r}"))
            .clone()
    };
    let lacking = pre("client-puts-block-on-close");
    assert_eq!(lacking["reached"], false, "{lacking}");
    assert!(
        lacking["evidence"]
            .as_str()
            .unwrap()
            .contains("chaos-ozone:2.2.0"),
        "{lacking}"
    );
    let defined = pre("datanodes-stream");
    assert_eq!(defined["reached"], true, "{defined}");
    assert!(
        r["stopped"]
            .as_str()
            .unwrap()
            .starts_with("stopped before the cluster started"),
        "{r}"
    );
    assert!(!run.join("history.jsonl").exists());
    assert_no_container_of(&r);
}

/// The lease divergence as the converge and durable checks name it: every file with `odd` at
/// "length 1024, open" and the other two OMs at "length 2048, closed", and every acknowledged
/// close missing from the final reads (made through `odd`, the leader by then).
fn assert_the_files_stayed_open_on(run: &std::path::Path, odd: &str) {
    let r = result(run);
    let check = |name: &str| {
        r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == name)
            .unwrap_or_else(|| panic!("no {name} check: {r}"))
            .clone()
    };
    let converge = check("converge");
    assert_eq!(converge["verdict"], "illegal", "{converge}");
    let disagreements = converge["detail"]["lookups"]["disagreements"]
        .as_array()
        .unwrap();
    assert_eq!(disagreements.len(), 3, "{converge}");
    for d in disagreements {
        for (om, answer) in d["answers"].as_object().unwrap() {
            let (length, open) = if om == odd {
                (1024, true)
            } else {
                (2048, false)
            };
            assert_eq!(answer["length"], length, "{om}: {d}");
            assert_eq!(answer["open"], open, "{om}: {d}");
        }
    }
    let durable = check("durable");
    assert_eq!(durable["verdict"], "illegal", "{durable}");
    assert_eq!(durable["detail"]["lost"].as_array().unwrap().len(), 3);
    // The OM's own words: it refused each writer's close.
    let log = std::fs::read_to_string(run.join(format!("logs/{odd}.log"))).unwrap();
    assert!(
        log.matches("KEY_UNDER_LEASE_RECOVERY").count() >= 3,
        "{odd} refused three closes"
    );
}

/// The first event of faults.jsonl that applied `action`.
fn first_applied<'a>(faults: &'a [FaultEvent], action: &str) -> &'a FaultEvent {
    faults
        .iter()
        .find(|f| f.action == action && f.ok())
        .unwrap_or_else(|| panic!("no {action} applied: {faults:?}"))
}

/// HDDS-16767 with a pause: the follower paused past the 30 s soft limit applies recoverLease
/// by its own clock, starts recovery the leader refused, then refuses the writers' closes.
#[test]
fn recover_lease_diverges_on_the_follower_paused_past_the_soft_limit() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    ensure_image();
    let (output, run) = play(
        "ozone",
        "scenarios/ozone/recover-lease-divergence.yaml",
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    let faults = read_faults(&run);
    let pause = first_applied(&faults, "pause");
    let paused = pause.targets[0].as_str();
    assert!(faults
        .iter()
        .any(|f| f.action == "transfer-leader" && f.ok() && f.targets[0] == paused));
    assert_the_files_stayed_open_on(&run, paused);
}

/// HDDS-16767 with a clock: one follower's wall clock 90 s ahead (libfaketime in its JVM, the
/// offset set while it runs) is enough; no pause.
#[test]
fn recover_lease_diverges_on_the_follower_whose_clock_runs_ahead() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    ensure_image();
    let (output, run) = play(
        "ozone",
        "scenarios/ozone/recover-lease-clock-skew.yaml",
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    let faults = read_faults(&run);
    let skew = first_applied(&faults, "clock-skew");
    assert_eq!(skew.offset.as_deref(), Some("+90s"));
    let skewed = skew.targets[0].as_str();
    let detail = skew.detail.clone().unwrap_or_default();
    let processes = detail["processes"][skewed].as_array().unwrap();
    assert!(
        processes
            .iter()
            .any(|p| p.as_str().unwrap().ends_with(" java")),
        "libfaketime is in the OM's JVM: {processes:?}"
    );
    assert!(!faults.iter().any(|f| f.action == "pause"));
    assert_the_files_stayed_open_on(&run, skewed);
}

/// The CHAOS-JVM lines of a node's log in the run folder: Byteman's firings, as the helper
/// printed them.
fn firings(run: &std::path::Path, node: &str) -> Vec<Value> {
    let log = std::fs::read_to_string(run.join("logs").join(format!("{node}.log"))).unwrap();
    log.lines()
        .filter_map(|l| l.split_once("CHAOS-JVM ").map(|(_, json)| json))
        .map(|json| serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}")))
        .collect()
}

/// Each JVM fault once on a live cluster, each seen doing what it says: the trace records
/// om1's applies with their log index and command, the delay holds each apply 400-600 ms,
/// the throw fails the clients' calls with the injected message, and the hold stops om2's apply
/// thread until the unload step, which lets it go on. The history stays linearizable.
#[test]
fn jvm_faults_trace_delay_throw_and_hold_inside_the_oms() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    ensure_image();
    let (output, run) = play("ozone", "scenarios/ozone/jvm-faults.yaml", &[]);
    let r = result(&run);
    assert_eq!(output.status.code(), Some(0), "{r}");
    assert_eq!(r["confirmation"], "held", "{r}");

    let om1 = firings(&run, "om1");
    let of = |rule: &str, event: &str| -> Vec<&Value> {
        om1.iter()
            .filter(|f| f["rule"] == rule && f["event"] == event)
            .collect()
    };
    // The trace: each apply's index, rising, with the command it applied.
    let traced = of("chaos-step-1", "fired");
    assert!(traced.len() >= 5, "{traced:?}");
    let indexes: Vec<u64> = traced
        .iter()
        .map(|f| {
            f["values"]["$2.getIndex()"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(indexes.windows(2).all(|w| w[0] < w[1]), "{indexes:?}");
    assert!(
        traced
            .iter()
            .any(|f| f["values"]["$1.getCmdType()"] == "CreateKey"),
        "{traced:?}"
    );
    // The delay: every firing drew from 400..=600 ms.
    let delayed = of("chaos-step-2", "delayed");
    assert!(delayed.len() >= 5, "{delayed:?}");
    assert!(
        delayed
            .iter()
            .all(|f| (400..=600).contains(&f["delay_ms"].as_u64().unwrap())),
        "{delayed:?}"
    );
    // The throw: clients' calls failed with the injected message while it was loaded.
    assert!(!of("chaos-step-3", "threw").is_empty());
    let history = lines(&run, "history.jsonl");
    let refused = history
        .iter()
        .filter(|e| {
            e["type"] == "fail"
                && e["error"]
                    .as_str()
                    .is_some_and(|m| m.contains("chaos: refused by jvm-throw"))
        })
        .count();
    assert!(refused >= 1, "no call failed with the injected message");
    // The hold: om2's apply thread waited from its first entry after step 4 to step 5.
    let om2 = firings(&run, "om2");
    let held: Vec<&Value> = om2.iter().filter(|f| f["event"] == "held").collect();
    let released: Vec<&Value> = om2.iter().filter(|f| f["event"] == "released").collect();
    assert_eq!(held.len(), 1, "one apply thread, held once: {om2:?}");
    assert_eq!(released.len(), 1, "{om2:?}");
    assert!(
        released[0]["held_ms"].as_u64().unwrap() >= 5_000,
        "{:?}",
        released[0]
    );
    // Step 6 fired on om2's held line: om3's trace began no earlier, and om3 applied on.
    let om3 = firings(&run, "om3");
    let traced_on_om3 = om3
        .iter()
        .filter(|f| f["rule"] == "chaos-step-6" && f["event"] == "fired")
        .count();
    assert!(traced_on_om3 >= 3, "{om3:?}");
    let faults = read_faults(&run);
    let trace_on_om3 = faults
        .iter()
        .find(|f| f.step == Some(6) && f.ok())
        .unwrap_or_else(|| panic!("step 6 never applied: {faults:?}"));
    assert!(
        trace_on_om3
            .trigger
            .as_deref()
            .is_some_and(|by| by.contains("om2: ") && by.contains("\"event\":\"held\"")),
        "{trace_on_om3:?}"
    );
    // faults.jsonl keeps each rule's text with its step.
    let hold = first_applied(&faults, "jvm-hold");
    let text = hold.detail.as_ref().unwrap()["rule"].as_str().unwrap();
    assert!(
        text.contains("RULE chaos-step-4") && text.contains("METHOD runCommand"),
        "{text}"
    );
}

/// A rule the JVM cannot take (here: a method the class does not have) is refused when its step
/// fires: the run ends 255 naming the step, the node and why, and leaves no container.
#[test]
fn a_jvm_rule_that_matches_no_method_ends_the_run_255_naming_the_step() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    ensure_image();
    let dir = repo().join(format!(
        "target/e2e-runs/jvm-refused-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("jvm-refused.yaml");
    std::fs::write(
        &scenario,
        "name: ozone-jvm-refused
system: ozone
cluster: { compose: docker-compose.yml, profile: ozone }
workload: { kind: create, processes: 2, rate: 5/s, duration: 15s, nodes: [om1] }
faults:
  - at: 2s
    do: jvm-hold
    target: om1
    jvm: { class: org.apache.hadoop.ozone.om.ratis.OzoneManagerStateMachine, method: noSuchMethod }
checks:
  - linearizable: { model: cas-register }
",
    )
    .unwrap();
    let (output, run) = play("ozone", scenario.to_str().unwrap(), &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(255), "{stdout}\n{stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(
        said.contains("step 0 (jvm-hold on om1) was refused")
            && said.contains("was injected nowhere"),
        "{said}"
    );
    let faults = read_faults(&run);
    assert!(
        faults
            .iter()
            .any(|f| f.action == "jvm-hold" && f.phase == Phase::Apply && !f.ok()),
        "{faults:?}"
    );
    let r = result(&run);
    assert_no_container_of(&r);
}

/// No container of the run whose result.json is `r` is left.
fn assert_no_container_of(r: &Value) {
    let label = format!("label=chaos.run={}", r["run_id"].as_str().unwrap());
    let left = Command::new("docker")
        .args(["ps", "-aq", "--filter", &label])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&left.stdout).trim().is_empty());
}
