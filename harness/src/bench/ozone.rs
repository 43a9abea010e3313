//! `chaos bench --ozone`: where an Ozone cluster's start goes, trial by trial.
//!
//! Each trial creates the Ozone profile (3 OMs, SCM, 3 datanodes, s3g), waits until it is
//! serviceable (an OM leader, the SCM out of safe mode, a RATIS/THREE pipeline open: what every
//! Ozone run waits for), then restarts every OM, then one OM, each until serviceable again, as a
//! `restart` fault does. The phases come from the nodes' own log lines, timed by the harness's
//! log follower (seconds since the containers were created, or since the restart was asked), so
//! measuring adds no probe of its own. Prints; never asserts on time.

use std::path::Path;
use std::time::{Duration, Instant};

use super::BenchCluster;
use crate::cluster::{docker, Cluster};
use crate::error::{HarnessError, Result};
use crate::scenario::WorkloadKind;
use crate::systems::{self, AdapterSettings, SystemAdapter};

/// The line each kind of node prints when its JVM listens on the port its healthcheck dials.
const LISTENING: [(&str, &str); 4] = [
    (
        "scm",
        "StorageContainerLocationProtocol RPC server is listening",
    ),
    ("om", "OzoneManager RPC server is listening"),
    ("dn", "HTTP server of hddsDatanode listening"),
    ("s3g", "HTTP server of s3gateway listening"),
];
/// An OM that won an election (Ratis's role change, as the OM logs it).
const OM_LEADER: &str = "changes role from CANDIDATE to LEADER";
/// The SCM leaves safe mode once three datanodes registered and a RATIS/THREE pipeline is
/// healthy (HealthyPipelineSafeModeRule).
const SAFE_MODE_EXIT: &str = "SCM exiting safe mode.";
const PIPELINE_OPEN: &str = "Opened pipeline";

/// One measured phase: a name and seconds from the trial's zero, `None` when never seen.
type Phase = (String, Option<f64>);

pub async fn run_ozone(compose_path: &Path, trials: usize) -> Result<()> {
    let trials = trials.max(1);
    let mut starts: Vec<Vec<Phase>> = Vec::new();
    let mut restarts_all: Vec<Vec<Phase>> = Vec::new();
    let mut restarts_one: Vec<Vec<Phase>> = Vec::new();
    let mut memory: Vec<f64> = Vec::new();
    for trial in 1..=trials {
        let t = one_trial(compose_path, trial == 1).await?;
        print_trial(trial, "start (from create)", &t.start);
        print_trial(trial, "restart of om1, om2, om3", &t.restart_all);
        print_trial(trial, "restart of om1", &t.restart_one);
        println!(
            "trial {trial}: resident memory of all JVMs {:.0} MB",
            t.memory_mb
        );
        starts.push(t.start);
        restarts_all.push(t.restart_all);
        restarts_one.push(t.restart_one);
        memory.push(t.memory_mb);
    }
    println!("medians over {trials} trial(s), seconds:");
    print_medians("start (from create)", &starts);
    print_medians("restart of om1, om2, om3", &restarts_all);
    print_medians("restart of om1", &restarts_one);
    println!(
        "  resident memory of all JVMs: {:.0} MB",
        median(&memory).unwrap_or(f64::NAN)
    );
    Ok(())
}

struct Trial {
    start: Vec<Phase>,
    restart_all: Vec<Phase>,
    restart_one: Vec<Phase>,
    memory_mb: f64,
}

async fn one_trial(compose_path: &Path, first: bool) -> Result<Trial> {
    let info = systems::lookup("ozone").expect("the ozone adapter");
    let bench = BenchCluster::launch(compose_path, "ozone", info.ready_within).await?;
    let measured = async {
        let cluster = &bench.cluster;
        if first {
            let image = bench
                .compose
                .service("om1")
                .and_then(|s| s.image.clone())
                .unwrap_or_default();
            println!(
                "chaos bench --ozone: {} nodes of profile ozone ({image})",
                cluster.names().len()
            );
        }
        let adapter = (info.make)(cluster, &AdapterSettings::plain(WorkloadKind::CREATE, None));
        let zero = bench.started;
        serviceable(adapter.as_ref(), info.ready_within).await?;
        let mut start = vec![(
            "healthy (every healthcheck)".to_string(),
            Some(bench.healthy.as_secs_f64()),
        )];
        start.extend(node_phases(&bench.dir, cluster, 0.0));
        start.push(("serviceable".into(), Some(secs(zero.elapsed()))));
        let memory_mb = resident_mb(&bench.docker, cluster).await?;

        let oms: Vec<String> = cluster
            .names()
            .into_iter()
            .filter(|n| n.starts_with("om"))
            .collect();
        let restart_all = restart(&bench, adapter.as_ref(), &oms, info.ready_within).await?;
        let restart_one = restart(&bench, adapter.as_ref(), &oms[..1], info.ready_within).await?;
        Ok::<_, HarnessError>(Trial {
            start,
            restart_all,
            restart_one,
            memory_mb,
        })
    }
    .await;
    let teardown = bench.teardown().await;
    let trial = measured?;
    teardown?;
    Ok(trial)
}

/// Restarts `oms` at once (`docker restart`, as the `restart` fault does) and times them until
/// the cluster is serviceable again and each of them listens; phases count from the moment the
/// restart was asked. "an OM elected" stays `never` when the leader was not restarted.
async fn restart(
    bench: &BenchCluster,
    adapter: &dyn SystemAdapter,
    oms: &[String],
    within: Duration,
) -> Result<Vec<Phase>> {
    let cluster = &bench.cluster;
    let asked = bench.started.elapsed();
    let begun = Instant::now();
    let results = futures_util::future::join_all(oms.iter().map(|om| cluster.restart(om))).await;
    results.into_iter().collect::<Result<Vec<_>>>()?;
    let mut phases = vec![(
        "containers restarted".to_string(),
        Some(secs(begun.elapsed())),
    )];
    serviceable(adapter, within).await?;
    let serviceable_after = secs(begun.elapsed());
    let after = secs(asked);
    // A follower's return is not waited for by `serviceable` (the leader serves): its line.
    let deadline = Instant::now() + within;
    for om in oms {
        let mut line = first_line(&bench.dir, om, LISTENING[1].1, after);
        while line.is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(250)).await;
            line = first_line(&bench.dir, om, LISTENING[1].1, after);
        }
        phases.push((format!("{om} listening"), line.map(|t| t - after)));
    }
    let leader = oms
        .iter()
        .chain(
            cluster
                .names()
                .iter()
                .filter(|n| n.starts_with("om") && !oms.contains(n)),
        )
        .filter_map(|om| first_line(&bench.dir, om, OM_LEADER, after))
        .min_by(f64::total_cmp);
    phases.push(("an OM elected".into(), leader.map(|t| t - after)));
    phases.push(("serviceable".into(), Some(serviceable_after)));
    Ok(phases)
}

async fn serviceable(adapter: &dyn SystemAdapter, within: Duration) -> Result<()> {
    adapter.prepare(within).await.map_err(HarnessError::infra)
}

/// Each node's JVM listening, the first OM leader, the first pipeline open and the SCM out of
/// safe mode, from the log lines after `after` seconds.
fn node_phases(dir: &Path, cluster: &Cluster, after: f64) -> Vec<Phase> {
    let mut phases = Vec::new();
    for node in cluster.names() {
        let Some((_, line)) = LISTENING
            .iter()
            .find(|(prefix, _)| node.starts_with(prefix))
        else {
            continue;
        };
        phases.push((
            format!("{node} listening"),
            first_line(dir, &node, line, after),
        ));
    }
    let leader = cluster
        .names()
        .iter()
        .filter(|n| n.starts_with("om"))
        .filter_map(|om| first_line(dir, om, OM_LEADER, after))
        .min_by(f64::total_cmp);
    phases.push(("an OM elected".into(), leader));
    phases.push((
        "a pipeline open".into(),
        first_line(dir, "scm", PIPELINE_OPEN, after),
    ));
    phases.push((
        "SCM out of safe mode".into(),
        first_line(dir, "scm", SAFE_MODE_EXIT, after),
    ));
    phases
}

/// Seconds (the log follower's `[   12.345678]` prefix) of the first line of `node`'s log at or
/// after `after` that contains `needle`.
fn first_line(dir: &Path, node: &str, needle: &str, after: f64) -> Option<f64> {
    let text = std::fs::read_to_string(dir.join(format!("{node}.log"))).ok()?;
    text.lines().find_map(|line| {
        let rest = line.strip_prefix('[')?;
        let (stamp, body) = rest.split_once(']')?;
        let t: f64 = stamp.trim().parse().ok()?;
        (t >= after && body.contains(needle)).then_some(t)
    })
}

async fn resident_mb(docker: &bollard::Docker, cluster: &Cluster) -> Result<f64> {
    let ps: Vec<String> = ["ps", "-C", "java", "-o", "rss="]
        .iter()
        .map(|w| w.to_string())
        .collect();
    let mut total = 0.0;
    for node in cluster.names() {
        let container = &cluster
            .node(&node)
            .expect("a node of the cluster")
            .container;
        // `ps -C java` exits 1 when no JVM runs there: that node's share is nothing.
        let out = match docker::exec(docker, container, &ps, None).await {
            Ok(out) | Err(docker::ExecError::Exit(out)) => out,
            Err(e) => return Err(HarnessError::infra(e.to_string())),
        };
        let kib: f64 = out
            .stdout
            .split_whitespace()
            .filter_map(|n| n.parse::<f64>().ok())
            .sum();
        total += kib / 1024.0;
    }
    Ok(total)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn shown(t: Option<f64>) -> String {
    t.map_or("never".into(), |t| format!("{t:.1}"))
}

fn print_trial(trial: usize, what: &str, phases: &[Phase]) {
    let list: Vec<String> = phases
        .iter()
        .map(|(name, t)| format!("{name} {}", shown(*t)))
        .collect();
    println!("trial {trial}: {what}: {}", list.join(", "));
}

/// Per phase (in the first trial's order), the median of the trials that saw it.
fn print_medians(what: &str, trials: &[Vec<Phase>]) {
    println!("  {what}:");
    let Some(first) = trials.first() else { return };
    for (name, _) in first {
        let seen: Vec<f64> = trials
            .iter()
            .filter_map(|t| t.iter().find(|(n, _)| n == name).and_then(|(_, v)| *v))
            .collect();
        println!(
            "    {name:<30} {:>6}  ({} of {} trials)",
            shown(median(&seen)),
            seen.len(),
            trials.len()
        );
    }
}

fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn first_line_reads_the_followers_stamps() {
        let dir = std::env::temp_dir().join(format!("bench-ozone-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("om1.log"),
            "[    1.500000] entrypoint: waiting for scm:9860\n\
             [   20.250000] INFO om.OzoneManager: OzoneManager RPC server is listening at om1\n\
             [   90.000000] INFO om.OzoneManager: OzoneManager RPC server is listening at om1\n",
        )
        .unwrap();
        assert_eq!(first_line(&dir, "om1", LISTENING[1].1, 0.0), Some(20.25));
        assert_eq!(first_line(&dir, "om1", LISTENING[1].1, 30.0), Some(90.0));
        assert_eq!(first_line(&dir, "om1", OM_LEADER, 0.0), None);
        assert_eq!(first_line(&dir, "om2", OM_LEADER, 0.0), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
