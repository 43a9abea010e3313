//! Talking to the Docker engine: connecting, the labels every run object carries, running a
//! command in a container, and sweeping what dead runs left behind.

use std::collections::HashMap;
use std::time::Duration;

use bollard::query_parameters::{
    ListContainersOptionsBuilder, ListNetworksOptionsBuilder, ListVolumesOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveVolumeOptionsBuilder,
};
use bollard::Docker;

use crate::error::{HarnessError, Result};

/// Docker's own message, without bollard's wrapping, for one-line causes.
pub fn docker_message(e: &bollard::errors::Error) -> String {
    match e {
        bollard::errors::Error::DockerResponseServerError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// A Docker error as the harness's: the infrastructure failed (exit 255). Here rather than in
/// chaos-core so that the run folder's types do not depend on a Docker client.
pub fn docker_error(e: bollard::errors::Error) -> HarnessError {
    HarnessError::Infra(format!("docker: {}", docker_message(&e)))
}

pub const LABEL_RUN: &str = "chaos.run";
pub const LABEL_NODE: &str = "chaos.node";
const LABEL_PID: &str = "chaos.pid";
const LABEL_PID_START: &str = "chaos.pid-start";

/// Connects and agrees on an API version (the engine here may be older than bollard's default).
pub async fn connect() -> Result<Docker> {
    let unreachable = |cause: String| {
        HarnessError::infra(format!(
            "Docker is not reachable ({cause}); start the engine (dockerd) or set DOCKER_HOST"
        ))
    };
    let docker = Docker::connect_with_local_defaults().map_err(|e| unreachable(e.to_string()))?;
    let docker = tokio::time::timeout(Duration::from_secs(10), docker.negotiate_version())
        .await
        .map_err(|_| unreachable("no answer in 10 s".into()))?
        .map_err(|e| unreachable(docker_message(&e)))?;
    tokio::time::timeout(Duration::from_secs(10), docker.ping())
        .await
        .map_err(|_| unreachable("no answer in 10 s".into()))?
        .map_err(|e| unreachable(docker_message(&e)))?;
    Ok(docker)
}

/// Labels for every container, network and volume of a run; the pid and its start time let a
/// later sweep tell a live run from a dead one without any state file.
pub fn run_labels(run_id: &str) -> HashMap<String, String> {
    let pid = std::process::id();
    HashMap::from([
        (LABEL_RUN.to_string(), run_id.to_string()),
        (LABEL_PID.to_string(), pid.to_string()),
        (
            LABEL_PID_START.to_string(),
            process_start(pid).unwrap_or(0).to_string(),
        ),
    ])
}

/// The start time of a process in clock ticks since boot (field 22 of /proc/PID/stat).
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces; fields after it are plain.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

fn run_is_alive(labels: &HashMap<String, String>) -> bool {
    let pid = labels.get(LABEL_PID).and_then(|p| p.parse::<u32>().ok());
    let start = labels
        .get(LABEL_PID_START)
        .and_then(|s| s.parse::<u64>().ok());
    match (pid, start) {
        (Some(pid), Some(start)) => process_start(pid) == Some(start),
        _ => false,
    }
}

#[derive(Debug, Default)]
pub struct Swept {
    pub containers: Vec<String>,
    pub networks: Vec<String>,
    pub volumes: Vec<String>,
}

impl Swept {
    pub fn is_empty(&self) -> bool {
        self.containers.is_empty() && self.networks.is_empty() && self.volumes.is_empty()
    }
}

fn label_filter(value: String) -> HashMap<String, Vec<String>> {
    HashMap::from([("label".to_string(), vec![value])])
}

/// Removes everything labelled by runs whose harness is gone (or, with `only_run`, by that run
/// alone, alive or not: the run's own teardown).
pub async fn sweep(docker: &Docker, only_run: Option<&str>) -> Result<Swept> {
    let filter = match only_run {
        Some(run) => format!("{LABEL_RUN}={run}"),
        None => LABEL_RUN.to_string(),
    };
    let doomed = |labels: &HashMap<String, String>| only_run.is_some() || !run_is_alive(labels);
    let mut swept = Swept::default();

    let containers = docker
        .list_containers(Some(
            ListContainersOptionsBuilder::new()
                .all(true)
                .filters(&label_filter(filter.clone()))
                .build(),
        ))
        .await
        .map_err(docker_error)?;
    for c in containers {
        let labels = c.labels.clone().unwrap_or_default();
        if !doomed(&labels) {
            continue;
        }
        let Some(id) = c.id else { continue };
        let options = RemoveContainerOptionsBuilder::new()
            .force(true)
            .v(true)
            .build();
        match docker.remove_container(&id, Some(options)).await {
            Ok(()) => {}
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => {}
            Err(e) => return Err(docker_error(e)),
        }
        let name = c
            .names
            .and_then(|n| n.first().cloned())
            .unwrap_or(id)
            .trim_start_matches('/')
            .to_string();
        swept.containers.push(name);
    }

    let networks = docker
        .list_networks(Some(
            ListNetworksOptionsBuilder::new()
                .filters(&label_filter(filter.clone()))
                .build(),
        ))
        .await
        .map_err(docker_error)?;
    for n in networks {
        if !doomed(&n.labels.clone().unwrap_or_default()) {
            continue;
        }
        let Some(name) = n.name else { continue };
        match docker.remove_network(&name).await {
            Ok(()) => swept.networks.push(name),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => {}
            Err(e) => return Err(docker_error(e)),
        }
    }

    let volumes = docker
        .list_volumes(Some(
            ListVolumesOptionsBuilder::new()
                .filters(&label_filter(filter))
                .build(),
        ))
        .await
        .map_err(docker_error)?;
    for v in volumes.volumes.unwrap_or_default() {
        if !doomed(&v.labels) {
            continue;
        }
        match docker
            .remove_volume(
                &v.name,
                Some(RemoveVolumeOptionsBuilder::new().force(true).build()),
            )
            .await
        {
            Ok(()) => swept.volumes.push(v.name),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => {}
            Err(e) => return Err(docker_error(e)),
        }
    }
    Ok(swept)
}

/// What a command run in a container printed and how it ended.
#[derive(Debug)]
pub struct ExecOutput {
    /// Standard output alone.
    pub stdout: String,
    /// Standard output and error as they came.
    pub all: String,
    pub code: i64,
}

/// Why [`exec`] gave no output: the engine refused, the command took too long, or it ran
/// and exited non-zero (then its output is here whole, for callers that read it anyway).
#[derive(Debug)]
pub enum ExecError {
    Docker(bollard::errors::Error),
    Timeout(Duration),
    Exit(ExecOutput),
}

impl std::fmt::Display for ExecError {
    /// One line: Docker's own message, `no answer within 20s`, or `exit 3: ` and the last
    /// three lines the command printed (joined by ` / `). Callers add the command and node.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Docker(e) => write!(f, "{}", docker_message(e)),
            ExecError::Timeout(after) => write!(f, "no answer within {after:?}"),
            ExecError::Exit(out) => {
                let tail: Vec<&str> = out.all.trim().lines().rev().take(3).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                write!(f, "exit {}: {}", out.code, tail.join(" / "))
            }
        }
    }
}

impl std::error::Error for ExecError {}

/// Runs a command in a container (no TTY) and waits for it to end, at most `patience` when
/// given (a paused node's daemon never answers the command's client). Exit 0 is the only
/// success; the caller names the command and the node in its own message.
pub async fn exec(
    docker: &Docker,
    container: &str,
    cmd: &[String],
    patience: Option<Duration>,
) -> std::result::Result<ExecOutput, ExecError> {
    let run = run_attached(docker, container, cmd);
    let out = match patience {
        Some(after) => tokio::time::timeout(after, run)
            .await
            .map_err(|_| ExecError::Timeout(after))?,
        None => run.await,
    }
    .map_err(ExecError::Docker)?;
    if out.code != 0 {
        return Err(ExecError::Exit(out));
    }
    Ok(out)
}

async fn run_attached(
    docker: &Docker,
    container: &str,
    cmd: &[String],
) -> std::result::Result<ExecOutput, bollard::errors::Error> {
    use bollard::container::LogOutput;
    use bollard::exec::{CreateExecOptions, StartExecResults};
    use futures_util::StreamExt;
    let created = docker
        .create_exec(
            container,
            CreateExecOptions {
                cmd: Some(cmd.to_vec()),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                ..Default::default()
            },
        )
        .await?;
    let (mut stdout, mut all) = (String::new(), String::new());
    if let StartExecResults::Attached { mut output, .. } =
        docker.start_exec(&created.id, None).await?
    {
        while let Some(Ok(chunk)) = output.next().await {
            let text = String::from_utf8_lossy(chunk.as_ref()).into_owned();
            if matches!(chunk, LogOutput::StdOut { .. }) {
                stdout.push_str(&text);
            }
            all.push_str(&text);
        }
    }
    let code = docker
        .inspect_exec(&created.id)
        .await?
        .exit_code
        .unwrap_or_default();
    Ok(ExecOutput { stdout, all, code })
}

/// Starts a command in a container and returns at once, without its output or exit code.
pub async fn exec_detached(
    docker: &Docker,
    container: &str,
    cmd: &[String],
) -> std::result::Result<(), bollard::errors::Error> {
    use bollard::exec::{CreateExecOptions, StartExecOptions};
    let created = docker
        .create_exec(
            container,
            CreateExecOptions {
                cmd: Some(cmd.to_vec()),
                ..Default::default()
            },
        )
        .await?;
    let options = StartExecOptions {
        detach: true,
        ..Default::default()
    };
    docker.start_exec(&created.id, Some(options)).await?;
    Ok(())
}

/// Creates a container, runs it to its end and removes it: its exit code and its output (both
/// streams). The caller's labels let a sweep find it if the harness dies meanwhile.
pub async fn run_once(
    docker: &Docker,
    name: &str,
    body: bollard::models::ContainerCreateBody,
) -> Result<(i64, String)> {
    use bollard::query_parameters::{
        CreateContainerOptionsBuilder, LogsOptionsBuilder, StartContainerOptions,
        WaitContainerOptions,
    };
    use futures_util::StreamExt;
    docker
        .create_container(
            Some(CreateContainerOptionsBuilder::new().name(name).build()),
            body,
        )
        .await
        .map_err(docker_error)?;
    let outcome = async {
        docker
            .start_container(name, None::<StartContainerOptions>)
            .await
            .map_err(docker_error)?;
        let mut wait = docker.wait_container(name, None::<WaitContainerOptions>);
        let mut code = 0;
        while let Some(status) = wait.next().await {
            match status {
                Ok(s) => code = s.status_code,
                Err(bollard::errors::Error::DockerContainerWaitError { code: c, .. }) => code = c,
                Err(e) => return Err(docker_error(e)),
            }
        }
        let options = LogsOptionsBuilder::new().stdout(true).stderr(true).build();
        let mut stream = docker.logs(name, Some(options));
        let mut output = String::new();
        while let Some(Ok(chunk)) = stream.next().await {
            output.push_str(&String::from_utf8_lossy(&chunk.into_bytes()));
        }
        Ok((code, output))
    }
    .await;
    let _ = docker
        .remove_container(
            name,
            Some(RemoveContainerOptionsBuilder::new().force(true).build()),
        )
        .await;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_and_a_stale_start_is_not() {
        let labels = run_labels("t");
        assert!(run_is_alive(&labels));
        let mut stale = labels.clone();
        stale.insert(LABEL_PID_START.into(), "1".into());
        assert!(!run_is_alive(&stale));
        assert!(!run_is_alive(&HashMap::new()));
    }

    #[test]
    fn a_failed_command_shows_its_exit_code_and_last_lines() {
        let out = ExecOutput {
            stdout: String::new(),
            all: "one\ntwo\nthree\nfour\n".into(),
            code: 3,
        };
        assert_eq!(
            ExecError::Exit(out).to_string(),
            "exit 3: two / three / four"
        );
        assert_eq!(
            ExecError::Timeout(Duration::from_secs(20)).to_string(),
            "no answer within 20s"
        );
    }
}
