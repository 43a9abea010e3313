//! The real `docker compose` (the CLI plugin scripts/install-compose builds) against the
//! repository's docker-compose.yml and the harness:
//!
//! - for every profile, Compose reads each service as the harness's own reader does (image,
//!   command, environment, ports, healthcheck, ...), so `docker compose up` by hand and
//!   `chaos run` start the same cluster;
//! - `chaos run --attach PROJECT` plays scenarios on an etcd cluster brought up with
//!   `docker compose -p PROJECT --profile etcd up -d --wait`, and leaves it up and healthy.
//!
//! No `docker compose` is a failure here, never a skip (scripts/setup installs it; CI builds
//! it in the background).

mod common;

use std::collections::BTreeMap;
use std::process::{Command, Output};
use std::time::Duration;

use chaos::cluster::compose::{parse_port, ComposeFile};
use common::{out_dir, repo, run_folder};
use serde_json::Value;

/// `docker compose ARGS` in the repository; panics with what to do when the plugin is missing.
fn compose(args: &[&str]) -> Output {
    let output = Command::new("docker")
        .arg("compose")
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the docker CLI runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() && stderr.contains("is not a docker command")
        || stderr.contains("unknown command: docker compose")
    {
        panic!(
            "`docker compose` is not installed (the CLI plugin): run scripts/install-compose \
             (scripts/setup does) and test again; stderr: {stderr}"
        );
    }
    output
}

fn compose_ok(args: &[&str]) -> String {
    let output = compose(args);
    assert!(
        output.status.success(),
        "docker compose {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Go's durations as Compose prints them (`1m30s`, `500ms`, `3s`), in milliseconds.
fn go_duration_ms(text: &str) -> u64 {
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().expect("a number");
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        total += number
            * match &rest[..unit] {
                "h" => 3_600_000.0,
                "m" => 60_000.0,
                "s" => 1000.0,
                "ms" => 1.0,
                other => panic!("unit {other} in {text}"),
            };
        rest = &rest[unit..];
    }
    total as u64
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array().map(|a| {
        a.iter()
            .map(|s| s.as_str().expect("a string").to_string())
            .collect()
    })
}

/// What Compose makes of each service of each profile is what the harness makes of it.
#[test]
fn compose_reads_every_profile_as_the_harness_does() {
    let file = ComposeFile::load(&repo().join("docker-compose.yml")).expect("the harness reads it");
    let profiles = compose_ok(&["config", "--profiles"]);
    let listed: Vec<&str> = profiles.lines().collect();
    assert_eq!(listed, file.profiles(), "the profiles");
    for profile in file.profiles() {
        let text = compose_ok(&["--profile", &profile, "config", "--format", "json"]);
        let config: Value = serde_json::from_str(&text).unwrap();
        let services = config["services"].as_object().unwrap();
        let mut theirs: Vec<&String> = services.keys().collect();
        theirs.sort();
        let mut ours = file.profile_services(&profile);
        ours.sort();
        assert_eq!(theirs, ours.iter().collect::<Vec<_>>(), "profile {profile}");
        for (name, s) in services {
            let ours = file.service(name).unwrap();
            let at = format!("profile {profile}, service {name}");
            assert_eq!(s["image"].as_str(), ours.image.as_deref(), "{at}: image");
            assert_eq!(strings(&s["command"]), ours.command, "{at}: command");
            assert_eq!(
                strings(&s["entrypoint"]),
                ours.entrypoint,
                "{at}: entrypoint"
            );
            assert_eq!(
                s["hostname"].as_str(),
                ours.hostname.as_deref(),
                "{at}: hostname"
            );
            let env: BTreeMap<String, String> = s["environment"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            let our_env: BTreeMap<String, String> = ours.environment.0.iter().cloned().collect();
            assert_eq!(env, our_env, "{at}: environment");
            // Published on loopback only, by Compose as by the harness: a cluster brought up by
            // hand is no more reachable from other machines than a run's.
            let ports: Vec<(Option<u16>, u16)> = s["ports"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| {
                            assert_eq!(p["host_ip"], "127.0.0.1", "{at}: a port not on loopback");
                            assert_eq!(p["protocol"], "tcp", "{at}: ports");
                            let host = p["published"].as_str().and_then(|h| h.parse().ok());
                            (host, p["target"].as_u64().unwrap() as u16)
                        })
                        .collect()
                })
                .unwrap_or_default();
            let our_ports: Vec<(Option<u16>, u16)> = ours
                .ports
                .iter()
                .map(|p| parse_port(p).map(|p| (p.host, p.container)).unwrap())
                .collect();
            assert_eq!(ports, our_ports, "{at}: ports");
            let health = &s["healthcheck"];
            match &ours.healthcheck {
                None => assert!(health.is_null(), "{at}: a healthcheck the harness misses"),
                Some(h) => {
                    assert_eq!(strings(&health["test"]), Some(h.test.clone()), "{at}: test");
                    let ms = |v: &Value| v.as_str().map(go_duration_ms);
                    let our_ms = |d: Option<Duration>| d.map(|d| d.as_millis() as u64);
                    assert_eq!(
                        ms(&health["interval"]),
                        our_ms(h.interval),
                        "{at}: interval"
                    );
                    assert_eq!(ms(&health["timeout"]), our_ms(h.timeout), "{at}: timeout");
                    assert_eq!(
                        ms(&health["start_period"]),
                        our_ms(h.start_period),
                        "{at}: start_period"
                    );
                    assert_eq!(health["retries"].as_i64(), h.retries, "{at}: retries");
                }
            }
            let mut depends: Vec<String> = s["depends_on"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            depends.sort();
            let mut our_depends = ours.depends_on.0.clone();
            our_depends.sort();
            assert_eq!(depends, our_depends, "{at}: depends_on");
            // Volumes: the same targets, each a bind mount of the same folder or a volume.
            let volumes: Vec<(String, String)> = s["volumes"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|v| {
                            let target = v["target"].as_str().unwrap().to_string();
                            let kind = match v["type"].as_str().unwrap() {
                                "bind" => v["source"].as_str().unwrap().to_string(),
                                "volume" => format!(
                                    "volume {}",
                                    v["source"].as_str().unwrap_or("(anonymous)")
                                ),
                                other => other.to_string(),
                            };
                            (target, kind)
                        })
                        .collect()
                })
                .unwrap_or_default();
            let our_volumes: Vec<(String, String)> = ours
                .volumes
                .iter()
                .map(|v| match v.split(':').collect::<Vec<_>>().as_slice() {
                    [target] => (target.to_string(), "volume (anonymous)".to_string()),
                    [source, target, ..] if source.starts_with('.') || source.starts_with('/') => {
                        let path = file.dir.join(source);
                        let path = path.canonicalize().unwrap_or(path);
                        (target.to_string(), path.to_string_lossy().into_owned())
                    }
                    [source, target, ..] => (target.to_string(), format!("volume {source}")),
                    [] => unreachable!(),
                })
                .collect();
            assert_eq!(volumes, our_volumes, "{at}: volumes");
            assert_eq!(
                strings(&s["cap_add"]).unwrap_or_default(),
                ours.cap_add,
                "{at}: cap_add"
            );
            let devices: Vec<String> = s["devices"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|d| {
                            format!(
                                "{}:{}",
                                d["source"].as_str().unwrap(),
                                d["target"].as_str().unwrap()
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let our_devices: Vec<String> = ours
                .devices
                .iter()
                .map(|d| {
                    let mut parts = d.split(':');
                    let host = parts.next().unwrap();
                    format!("{host}:{}", parts.next().unwrap_or(host))
                })
                .collect();
            assert_eq!(devices, our_devices, "{at}: devices");
        }
    }
}

/// A compose project taken down on every way out of the test.
struct Project(&'static str);

impl Drop for Project {
    fn drop(&mut self) {
        let down = compose(&[
            "-p",
            self.0,
            "--profile",
            "etcd",
            "down",
            "-v",
            "--timeout",
            "5",
        ]);
        if !down.status.success() {
            eprintln!(
                "docker compose down of {} failed: {}",
                self.0,
                String::from_utf8_lossy(&down.stderr)
            );
        }
    }
}

fn attach_run(project: &str, scenario: &str, extra: &[&str]) -> (Output, std::path::PathBuf) {
    let out = out_dir("attach", scenario);
    let started = std::time::Instant::now();
    let output = common::chaos_run(scenario, &[&["--attach", project], extra].concat(), &out)
        .output()
        .expect("chaos runs");
    eprintln!(
        "chaos run {scenario} --attach {project} ({:.0} s)\n--- stdout\n{}--- stderr\n{}",
        started.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let folder = if out.exists() { run_folder(&out) } else { out };
    (output, folder)
}

/// Every node of the project running, unpaused and healthy (Docker's healthcheck), and the
/// etcd cluster answering a write and a read through etcd1.
fn assert_up_and_healthy(project: &str) {
    let ps = compose_ok(&["-p", project, "--profile", "etcd", "ps", "--format", "json"]);
    let rows: Vec<Value> = ps
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3, "three nodes: {ps}");
    for row in &rows {
        assert_eq!(row["State"], "running", "{row}");
        assert_eq!(row["Health"], "healthy", "{row}");
    }
    let put = compose_ok(&[
        "-p",
        project,
        "exec",
        "-T",
        "etcd1",
        "etcdctl",
        "--command-timeout=5s",
        "put",
        "compose-e2e-check",
        "ok",
    ]);
    assert!(put.contains("OK"), "{put}");
    let get = compose_ok(&[
        "-p",
        project,
        "exec",
        "-T",
        "etcd1",
        "etcdctl",
        "--command-timeout=5s",
        "get",
        "--print-value-only",
        "compose-e2e-check",
    ]);
    assert_eq!(get.trim(), "ok");
}

/// No container, network or volume of the harness's own left behind by an attached run (the
/// partitions' helpers), and the project's containers are the three it brought up.
fn assert_nothing_of_the_harness_left(project: &str) {
    let leftovers = Command::new("docker")
        .args(["ps", "-a", "-q", "--filter"])
        .arg("label=chaos.run")
        .output()
        .unwrap();
    let ids = String::from_utf8_lossy(&leftovers.stdout);
    let ours: Vec<&str> = ids.lines().collect();
    // Other tests may run clusters at the same time; only a helper of a partition of ours
    // would join one of the project's namespaces.
    for id in ours {
        let inspect = Command::new("docker")
            .args(["inspect", "--format", "{{.HostConfig.NetworkMode}}", id])
            .output()
            .unwrap();
        let mode = String::from_utf8_lossy(&inspect.stdout);
        assert!(
            !mode.contains(project),
            "a helper container {id} of the run is left in {mode}"
        );
    }
}

/// `--attach`: register-faults (kills, pauses, partitions of the leader) passes on a cluster
/// Compose brought up, stale-reads (a known-bad control) is caught, and the cluster is still
/// up and healthy after each; a scenario with a fault only a node the harness creates can take
/// is refused before anything happens.
#[test]
fn attach_plays_on_a_cluster_compose_brought_up() {
    let project = "chaos-attach-e2e";
    // Left over by an interrupted earlier run of this test.
    drop(Project(project));
    let _down = Project(project);
    let up = compose(&[
        "-p",
        project,
        "--profile",
        "etcd",
        "up",
        "-d",
        "--wait",
        "--wait-timeout",
        "180",
        "--no-build",
        "--pull",
        "never",
    ]);
    assert!(
        up.status.success(),
        "docker compose up of profile etcd failed (images are built by `chaos images build \
         etcd`): {}",
        String::from_utf8_lossy(&up.stderr)
    );
    assert_up_and_healthy(project);

    // Refused before anything happens: one line that says why and what to do instead.
    let (refused, _) = attach_run(project, "scenarios/etcd/slow-fsync-leader.yaml", &[]);
    assert_eq!(refused.status.code(), Some(254), "refused as bad input");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--attach cannot play `slow-fsync`")
            && stderr.contains("chaosfs")
            && stderr.contains("without --attach"),
        "{stderr}"
    );
    let (nobody, _) = attach_run(
        "chaos-attach-e2e-nobody",
        "scenarios/etcd/stale-reads.yaml",
        &[],
    );
    assert_eq!(nobody.status.code(), Some(254));
    let stderr = String::from_utf8_lossy(&nobody.stderr);
    assert!(
        stderr.contains("no container of compose project `chaos-attach-e2e-nobody`")
            && stderr.contains("docker compose -p chaos-attach-e2e-nobody --profile etcd up"),
        "{stderr}"
    );

    let (output, run) = attach_run(project, "scenarios/etcd/register-faults.yaml", &[]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "register-faults attached must pass ({})",
        run.display()
    );
    let result = common::result(&run);
    assert_eq!(result["verdict"], "ok", "{result}");
    let attach = &result["attach"];
    assert_eq!(attach["project"], project, "{result}");
    let first_prefix = attach["key_prefix"].as_str().unwrap().to_string();
    assert!(
        result["command"]
            .as_str()
            .unwrap()
            .ends_with(&format!("--attach {project}")),
        "{result}"
    );
    // The faults happened, on the project's containers.
    let faults = std::fs::read_to_string(run.join("faults.jsonl")).unwrap();
    for action in ["\"kill\"", "\"pause\"", "\"partition\""] {
        assert!(faults.contains(action), "no {action} in faults.jsonl");
    }
    assert_up_and_healthy(project);
    assert_nothing_of_the_harness_left(project);

    let (output, run) = attach_run(project, "scenarios/etcd/stale-reads.yaml", &[]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "stale-reads attached must be caught ({})",
        run.display()
    );
    let result = common::result(&run);
    assert_eq!(result["verdict"], "illegal", "{result}");
    assert_eq!(result["confirmation"], "confirmed", "{result}");
    let second_prefix = result["attach"]["key_prefix"].as_str().unwrap();
    assert_ne!(first_prefix, second_prefix, "each run keys of its own");
    assert_up_and_healthy(project);
    assert_nothing_of_the_harness_left(project);

    // The keys the runs wrote are under their prefixes, and nothing else was written.
    let keys = compose_ok(&[
        "-p",
        project,
        "exec",
        "-T",
        "etcd1",
        "etcdctl",
        "get",
        "--prefix",
        "--keys-only",
        "",
    ]);
    let keys: Vec<&str> = keys.lines().filter(|k| !k.is_empty()).collect();
    assert!(
        keys.iter().any(|k| k.starts_with(&first_prefix)),
        "{keys:?}"
    );
    assert!(
        keys.iter().any(|k| k.starts_with(second_prefix)),
        "{keys:?}"
    );
    assert!(
        keys.iter().all(|k| k.starts_with(&first_prefix)
            || k.starts_with(second_prefix)
            || *k == "compose-e2e-check"),
        "{keys:?}"
    );
}
