//! Images without a registry: the base image comes from debootstrap (images/base/build.sh), and
//! every other image builds FROM it out of images/<name>/Dockerfile.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use bollard::query_parameters::BuildImageOptionsBuilder;
use bollard::Docker;
use futures_util::StreamExt;

use crate::cluster::compose::ComposeFile;
use crate::cluster::docker::docker_message;
use crate::cluster::TOOLS_IMAGE;
use crate::error::{HarnessError, Result};

pub const BASE_IMAGE: &str = "chaos-base:bookworm";

/// An image a run needs, and how to make it if it is missing.
pub struct ImageSpec {
    pub tag: String,
    /// Build context folder and Dockerfile name, when the image can be built here.
    pub build: Option<(PathBuf, String)>,
}

/// The images of some services of a compose file, plus the tools image for network faults.
pub fn images_for(compose: &ComposeFile, services: &[String]) -> Vec<ImageSpec> {
    let mut specs: Vec<ImageSpec> = Vec::new();
    for name in services {
        let Some(service) = compose.service(name) else {
            continue;
        };
        let Some(tag) = service.image.clone() else {
            continue;
        };
        if specs.iter().any(|s| s.tag == tag) {
            continue;
        }
        // Only the project's own images (chaos-*) are built here; any other tag a variable
        // picked (OZONE_IMAGE=apache/ozone:2.1.1) is the user's to pull or load.
        let build = service
            .build
            .as_ref()
            .filter(|_| tag.starts_with("chaos-"))
            .map(|b| {
                (
                    compose.dir.join(&b.context),
                    b.dockerfile.clone().unwrap_or_else(|| "Dockerfile".into()),
                )
            });
        specs.push(ImageSpec { tag, build });
    }
    specs.push(ImageSpec {
        tag: TOOLS_IMAGE.into(),
        build: Some((
            project_root(&compose.dir).join("images/tools"),
            "Dockerfile".into(),
        )),
    });
    specs
}

/// The folder holding images/ (the compose file may live elsewhere, e.g. in a test fixture).
pub fn project_root(start: &Path) -> PathBuf {
    start
        .ancestors()
        .find(|dir| dir.join("images/base/build.sh").is_file())
        .unwrap_or(start)
        .to_path_buf()
}

pub async fn exists(docker: &Docker, tag: &str) -> bool {
    docker.inspect_image(tag).await.is_ok()
}

/// Makes sure every image is there, building what is missing (base image first).
pub async fn ensure(docker: &Docker, repo: &Path, specs: &[ImageSpec], force: bool) -> Result<()> {
    for spec in specs {
        if !force && exists(docker, &spec.tag).await {
            continue;
        }
        let Some((context, dockerfile)) = &spec.build else {
            return Err(HarnessError::infra(missing_image_hint(&spec.tag)));
        };
        ensure_base(docker, repo, force).await?;
        if context.join("build.sh").is_file() {
            // The image needs more than a Docker build (s3s-fs: a binary compiled on the host
            // first): its own script builds it, and skips what is already there.
            if force && exists(docker, &spec.tag).await {
                let _ = docker
                    .remove_image(
                        &spec.tag,
                        None::<bollard::query_parameters::RemoveImageOptions>,
                        None,
                    )
                    .await;
            }
            run_build_script(&spec.tag, &context.join("build.sh")).await?;
        } else {
            build(docker, &spec.tag, context, dockerfile).await?;
        }
    }
    Ok(())
}

/// images/<name>/build.sh, for images that are not a plain Docker build. Its output feeds one
/// progress line (a Maven download says how many files it has); when it fails, its last lines
/// are shown and its last line (the script's own reason: "Maven Central has no Apache Ozone
/// 9.9.9") leads the error.
async fn run_build_script(tag: &str, script: &Path) -> Result<()> {
    let mut command = Command::new("bash");
    // The script learns which tag to make (chaos-ozone:<version>) from CHAOS_IMAGE_TAG.
    command.arg(script).env("CHAOS_IMAGE_TAG", tag);
    let label = format!("building image {tag} with {}", script.display());
    let (status, tail) = run_script(label, command, true).await?;
    if !status.success() {
        let last = tail.last().map(String::as_str).unwrap_or("");
        let reason = last
            .split_once("ERROR: ")
            .map_or(last, |(_, r)| r)
            .trim()
            .to_string();
        return Err(HarnessError::infra(format!(
            "{reason} ({} failed, {status}; the image {tag} is needed by this scenario)",
            script.display()
        )));
    }
    Ok(())
}

/// Runs a build script under a progress line (activity::Activity) fed by its stdout and
/// stderr. Returns its exit status and its last non-empty lines, which are printed when it
/// fails.
async fn run_script(
    label: String,
    mut command: Command,
    show_tail: bool,
) -> Result<(std::process::ExitStatus, Vec<String>)> {
    const TAIL: usize = 30;
    let what = label.clone();
    let outcome = tokio::task::spawn_blocking(move || -> std::io::Result<_> {
        use std::io::BufRead;
        use std::process::Stdio;
        let activity = crate::activity::Activity::start(&label);
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (lines, news) = std::sync::mpsc::channel::<String>();
        let readers: Vec<std::thread::JoinHandle<()>> = [
            child
                .stdout
                .take()
                .map(|o| Box::new(o) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|e| Box::new(e) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        .map(|pipe| {
            let lines = lines.clone();
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(pipe).lines().map_while(|l| l.ok()) {
                    let _ = lines.send(line);
                }
            })
        })
        .collect();
        drop(lines);
        let mut tail: Vec<String> = Vec::new();
        for line in news {
            if line.trim().is_empty() {
                continue;
            }
            activity.note(&line);
            tail.push(line);
            if tail.len() > TAIL {
                tail.remove(0);
            }
        }
        for reader in readers {
            let _ = reader.join();
        }
        let status = child.wait()?;
        if status.success() {
            activity.finish(&format!("{label}: done"));
        } else {
            drop(activity);
            if show_tail {
                for line in &tail {
                    eprintln!("  {line}");
                }
            }
        }
        Ok((status, tail))
    })
    .await
    .map_err(|e| HarnessError::infra(e.to_string()))?
    .map_err(|e| HarnessError::infra(format!("{what}: cannot run it: {e}")))?;
    Ok(outcome)
}

/// What to do about an image that is missing and cannot be built here (a registry image such as
/// apache/ozone): the pull line first (it is what the one-line summary shows), then the offline way.
pub fn missing_image_hint(tag: &str) -> String {
    format!(
        "image {tag} is missing and cannot be built here; get it with `docker pull {tag}`\n\n    \
         docker pull {tag}\n\n(no registry on this machine: pull where one answers, then \
         `docker save {tag} -o image.tar`, copy image.tar here and `docker load -i image.tar`)"
    )
}

/// The offline Debian base, made by images/base/build.sh (debootstrap + docker import, or a pull
/// and tag where a registry answers).
pub async fn ensure_base(docker: &Docker, repo: &Path, force: bool) -> Result<()> {
    if !force && exists(docker, BASE_IMAGE).await {
        return Ok(());
    }
    let script = project_root(repo).join("images/base/build.sh");
    let mut command = Command::new("bash");
    command.arg(&script);
    let label = format!(
        "building the base image {BASE_IMAGE} with {}",
        script.display()
    );
    let (status, _) = run_script(label, command, true).await?;
    if !status.success() {
        return Err(HarnessError::infra(format!(
            "images/base/build.sh failed ({status}); the base image {BASE_IMAGE} is needed to build every other image"
        )));
    }
    Ok(())
}

/// A build script whose failure the caller words in one line (its last lines are not printed):
/// exit status and last non-empty lines.
pub async fn run_script_quiet(
    label: String,
    command: Command,
) -> Result<(std::process::ExitStatus, Vec<String>)> {
    run_script(label, command, false).await
}

/// `docker build` of a context folder, for images made outside images/<name>/ (a patched or a
/// distribution's Ozone image). A failed build leaves no image and no container behind.
pub async fn build_image(
    docker: &Docker,
    tag: &str,
    context: &Path,
    dockerfile: &str,
) -> Result<()> {
    build(docker, tag, context, dockerfile).await
}

async fn build(docker: &Docker, tag: &str, context: &Path, dockerfile: &str) -> Result<()> {
    let activity = crate::activity::Activity::start(&format!(
        "building image {tag} from {}",
        context.display()
    ));
    let context_dir = context.to_path_buf();
    let archive = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<u8>> {
        let mut tar = tar::Builder::new(Vec::new());
        tar.append_dir_all(".", &context_dir)?;
        tar.into_inner()
    })
    .await
    .map_err(|e| HarnessError::infra(e.to_string()))?
    .map_err(|e| HarnessError::infra(format!("cannot read {}: {e}", context.display())))?;
    let options = BuildImageOptionsBuilder::new()
        .dockerfile(dockerfile)
        .t(tag)
        .rm(true)
        .forcerm(true)
        .labels(&HashMap::from([(
            "chaos.image".to_string(),
            tag.to_string(),
        )]))
        .build();
    let body = bollard::body_full(archive.into());
    let mut stream = docker.build_image(options, None, Some(body));
    let mut tail: Vec<String> = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(info) => {
                if let Some(line) = info.stream {
                    activity.note(&line);
                    tail.push(line);
                    if tail.len() > 20 {
                        tail.remove(0);
                    }
                }
                if let Some(err) = info.error_detail.and_then(|d| d.message) {
                    return Err(HarnessError::infra(format!(
                        "building {tag} failed: {err}\n{}",
                        tail.concat()
                    )));
                }
            }
            Err(e) => {
                return Err(HarnessError::infra(format!(
                    "building {tag} failed: {}\n{}",
                    docker_message(&e),
                    tail.concat()
                )))
            }
        }
    }
    activity.finish(&format!("image {tag} built"));
    Ok(())
}

/// The static chaosfs binary for nodes that mount it: `CHAOSFS_BIN` if set, else built (or found
/// up to date) by chaosfs/build-static.sh.
pub async fn ensure_chaosfs(repo: &Path) -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("CHAOSFS_BIN") {
        return Ok(PathBuf::from(path));
    }
    let script = project_root(repo).join("chaosfs/build-static.sh");
    let output = tokio::task::spawn_blocking(move || {
        Command::new("bash")
            .arg(&script)
            .stderr(std::process::Stdio::inherit())
            .output()
    })
    .await
    .map_err(|e| HarnessError::infra(e.to_string()))?
    .map_err(|e| HarnessError::infra(format!("cannot run chaosfs/build-static.sh: {e}")))?;
    if !output.status.success() {
        return Err(HarnessError::infra(
            "building chaosfs failed (chaosfs/build-static.sh); set CHAOSFS_BIN to a static chaosfs binary",
        ));
    }
    let path = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    if !path.is_file() {
        return Err(HarnessError::infra(format!(
            "chaosfs was not built at {}",
            path.display()
        )));
    }
    Ok(path)
}
