//! Ozone images of a user's build (issue 24): a release plus patches
//! (`chaos-ozone:<version>-p<digest>`, FROM the release image with the patched module jars
//! copied over, compiled by images/ozone/patch.sh), and a distribution folder or tarball as
//! Ozone's `mvn package -Pdist` writes it (`chaos-ozone:dist-<version>-<digest>`, the same
//! Dockerfile, launcher and conventions as the release image, the distribution's jars and
//! classpaths instead of Maven Central's).
//!
//! Bad arguments (a missing patch file, an unknown version, a folder that is not a
//! distribution) are `HarnessError::BadInput` (exit 254); a build that fails (a patch that does
//! not apply, a javac error, a path outside every published module) is `Infra` (exit 255); each
//! is one line, and neither leaves an image, a container or a temporary folder behind.

use std::path::{Path, PathBuf};
use std::process::Command;

use bollard::Docker;
use sha2::{Digest, Sha256};

use crate::cluster::images;
use crate::error::{HarnessError, Result};

/// The components whose classpath the image's launcher (images/ozone/ozone) runs.
pub const COMPONENTS: [&str; 7] = [
    "ozone-manager",
    "hdds-server-scm",
    "ozone-datanode",
    "ozone-s3gateway",
    "ozone-cli-shell",
    "ozone-cli-admin",
    "ozone-tools",
];

/// `2.2.0`, `2.2.1-rc1`: what images/ozone/build.sh accepts.
pub fn valid_version(version: &str) -> bool {
    let (core, suffix) = match version.split_once('-') {
        Some((c, s)) => (c, Some(s)),
        None => (version, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && suffix.is_none_or(|s| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        })
}

/// The first 12 hex digits of a SHA-256.
pub(crate) fn short_hex(hasher: Sha256) -> String {
    hasher.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `chaos-ozone:<version>-p<12 hex of sha256 over the patches' bytes, in order>`.
pub fn patched_tag(version: &str, patches: &[PathBuf]) -> Result<String> {
    let mut hasher = Sha256::new();
    for p in patches {
        let bytes = std::fs::read(p).map_err(|e| {
            HarnessError::BadInput(format!("patch {}: cannot read it: {e}", p.display()))
        })?;
        hasher.update(&bytes);
    }
    Ok(format!("chaos-ozone:{version}-p{}", short_hex(hasher)))
}

/// The arguments of a patched build, checked before anything is built: a version as
/// build.sh takes it, at least one patch, every patch a readable file.
pub fn check_patch_args(version: &str, patches: &[PathBuf]) -> Result<()> {
    if !valid_version(version) {
        return Err(HarnessError::BadInput(format!(
            "'{version}' is not an Ozone version (like 2.2.0)"
        )));
    }
    for p in patches {
        if !p.is_file() {
            return Err(HarnessError::BadInput(format!(
                "patch {}: no such file",
                p.display()
            )));
        }
    }
    Ok(())
}

/// A temporary folder removed on every way out (an error, a panic, Ctrl-C unwinding).
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(what: &str) -> Result<TempDir> {
        let dir = std::env::temp_dir().join(format!(
            "chaos-{what}-{}-{:08x}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| HarnessError::infra(format!("cannot create {}: {e}", dir.display())))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// chaos-ozone:<version> from Maven Central (images/ozone/build.sh) unless it is there. A
/// version Central does not have is bad input; any other failure is the build's.
pub async fn ensure_release(docker: &Docker, repo: &Path, version: &str) -> Result<String> {
    if !valid_version(version) {
        return Err(HarnessError::BadInput(format!(
            "'{version}' is not an Ozone version (like 2.2.0)"
        )));
    }
    let tag = format!("chaos-ozone:{version}");
    if images::exists(docker, &tag).await {
        return Ok(tag);
    }
    images::ensure_base(docker, repo, false).await?;
    let script = images::project_root(repo).join("images/ozone/build.sh");
    let mut command = Command::new("bash");
    command.arg(&script).env("CHAOS_IMAGE_TAG", &tag);
    let label = format!("building image {tag} with {}", script.display());
    let (status, tail) = images::run_script_quiet(label, command).await?;
    if !status.success() {
        let reason = script_reason(&tail);
        if reason.contains("Maven Central has no Apache Ozone") {
            return Err(HarnessError::BadInput(reason));
        }
        return Err(HarnessError::infra(format!(
            "building {tag} failed: {reason}"
        )));
    }
    Ok(tag)
}

/// A script's own reason for failing: its `ERROR: ...` line, else its last line.
pub(crate) fn script_reason(tail: &[String]) -> String {
    let line = tail
        .iter()
        .rev()
        .find(|l| l.contains("ERROR: "))
        .or(tail.last())
        .map(String::as_str)
        .unwrap_or("no output");
    line.split_once("ERROR: ")
        .map_or(line, |(_, r)| r)
        .trim()
        .to_string()
}

/// A release plus patches: chaos-ozone:<version>-p<digest>, built unless it is there (or
/// rebuilt with `force`). Returns the tag.
pub async fn ensure_patched(
    docker: &Docker,
    repo: &Path,
    version: &str,
    patches: &[PathBuf],
    force: bool,
) -> Result<String> {
    check_patch_args(version, patches)?;
    let tag = patched_tag(version, patches)?;
    if !force && images::exists(docker, &tag).await {
        return Ok(tag);
    }
    let release = ensure_release(docker, repo, version).await?;
    let work = TempDir::new("ozone-patch")?;
    let out = work.0.join("out");
    let script = images::project_root(repo).join("images/ozone/patch.sh");
    let mut command = Command::new("bash");
    command
        .arg(&script)
        .arg(version)
        .arg(&out)
        .args(patches)
        // patch.sh's own work folder goes inside ours, so it goes with ours.
        .env("TMPDIR", &work.0);
    let names = patch_names(patches);
    let label = format!("compiling {} against Ozone {version}", names.join(", "));
    let (status, tail) = images::run_script_quiet(label, command).await?;
    if !status.success() {
        return Err(HarnessError::infra(script_reason(&tail)));
    }
    // The context: the patched jars and a Dockerfile that copies them over the release's.
    let context = work.0.join("context");
    std::fs::create_dir_all(&context)
        .map_err(|e| HarnessError::infra(format!("cannot create {}: {e}", context.display())))?;
    let mut jars: Vec<String> = Vec::new();
    let entries = std::fs::read_dir(&out)
        .map_err(|e| HarnessError::infra(format!("patch.sh wrote no {}: {e}", out.display())))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(&format!("-{version}.jar")) {
            std::fs::rename(entry.path(), context.join(&name))
                .map_err(|e| HarnessError::infra(format!("cannot stage {name}: {e}")))?;
            jars.push(name);
        }
    }
    jars.sort();
    if jars.is_empty() {
        return Err(HarnessError::infra(
            "patch.sh compiled nothing to overlay".to_string(),
        ));
    }
    let mut dockerfile = format!(
        "# chaos-ozone {version} with {}\nFROM {release}\n",
        names.join(", ")
    );
    // A module no component of the image runs (recon, csi, ...): an overlay would change nothing.
    dockerfile.push_str(&format!(
        "RUN for j in {}; do test -f /opt/ozone/lib/$j || {{ echo \"$j is on no classpath of {release} (components: {}): patching it would change nothing\"; exit 1; }}; done\n",
        jars.join(" "),
        COMPONENTS.join(", ")
    ));
    for jar in &jars {
        dockerfile.push_str(&format!("COPY {jar} /opt/ozone/lib/{jar}\n"));
    }
    dockerfile.push_str(&format!(
        "LABEL chaos.ozone.patches=\"{}\"\nRUN ozone version >/dev/null\n\
         # The class-data sharing archives serve only the jars they were made from.\n\
         RUN /opt/ozone/libexec/cds-train\n",
        names.join(" ")
    ));
    std::fs::write(context.join("Dockerfile"), dockerfile)
        .map_err(|e| HarnessError::infra(format!("cannot write the Dockerfile: {e}")))?;
    images::build_image(docker, &tag, &context, "Dockerfile").await?;
    Ok(tag)
}

/// What `--dist PATH` found: the distribution's root folder (`ozone-<version>/`) and version.
pub struct Dist {
    pub root: PathBuf,
    pub version: String,
    /// Set when PATH was a tarball: the folder it was unpacked into (removed on drop).
    _unpacked: Option<TempDirHandle>,
}

/// Keeps an unpacked tarball's folder alive as long as the `Dist` that points into it.
pub struct TempDirHandle(#[allow(dead_code)] TempDir);

/// The parts of a distribution the image needs (as `mvn package -Pdist` lays them out).
const DIST_PARTS: [&str; 4] = [
    "share/ozone/lib",
    "share/ozone/classpath",
    "etc/hadoop",
    "libexec",
];

/// Finds the distribution in a folder or a `.tar.gz` (`ozone-<version>/` at its top, or the
/// folder itself); anything else is bad input that says what is missing.
pub fn find_dist(path: &Path) -> Result<Dist> {
    let name = path.to_string_lossy();
    let (folder, unpacked) = if path.is_file()
        && (name.ends_with(".tar.gz") || name.ends_with(".tgz"))
    {
        let dir = TempDir::new("ozone-dist")?;
        let status = Command::new("tar")
            .arg("-xzf")
            .arg(path)
            .arg("-C")
            .arg(&dir.0)
            .output()
            .map_err(|e| HarnessError::infra(format!("cannot run tar: {e}")))?;
        if !status.status.success() {
            return Err(HarnessError::BadInput(format!(
                "{}: not a gzipped tarball ({})",
                path.display(),
                String::from_utf8_lossy(&status.stderr).trim()
            )));
        }
        (dir.0.clone(), Some(TempDirHandle(dir)))
    } else if path.is_dir() {
        (path.to_path_buf(), None)
    } else if path.exists() {
        return Err(HarnessError::BadInput(format!(
            "{}: neither a folder nor a .tar.gz (an Ozone distribution, hadoop-ozone/dist/target/ozone-<version>)",
            path.display()
        )));
    } else {
        return Err(HarnessError::BadInput(format!(
            "{}: no such folder or tarball",
            path.display()
        )));
    };
    // The folder itself, or its one ozone-* child (the tarball's top, or dist/target).
    let root = if folder.join("share/ozone").is_dir() {
        folder.clone()
    } else {
        let children: Vec<PathBuf> = std::fs::read_dir(&folder)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.is_dir()
                            && p.file_name()
                                .is_some_and(|n| n.to_string_lossy().starts_with("ozone-"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        match children.as_slice() {
            [one] => one.clone(),
            _ => folder.clone(),
        }
    };
    let mut missing: Vec<String> = DIST_PARTS
        .iter()
        .filter(|p| !root.join(p).is_dir())
        .map(|p| format!("{p}/"))
        .collect();
    if root.join("share/ozone/classpath").is_dir() {
        missing.extend(
            COMPONENTS
                .iter()
                .map(|c| format!("share/ozone/classpath/{c}.classpath"))
                .filter(|f| !root.join(f).is_file()),
        );
    }
    // The version: the folder's name (ozone-2.2.0), else the OM jar's.
    let from_jar = || -> Option<String> {
        std::fs::read_dir(root.join("share/ozone/lib"))
            .ok()?
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.strip_prefix("ozone-manager-")?
                    .strip_suffix(".jar")
                    .map(str::to_string)
            })
            .find(|v| valid_version(v))
    };
    let version = root
        .file_name()
        .and_then(|n| {
            n.to_string_lossy()
                .strip_prefix("ozone-")
                .map(str::to_string)
        })
        .filter(|v| valid_version(v))
        .or_else(from_jar);
    if missing.is_empty() {
        if let Some(v) = &version {
            let jar = format!("share/ozone/lib/ozone-manager-{v}.jar");
            if !root.join(&jar).is_file() {
                missing.push(jar);
            }
        } else {
            missing.push("share/ozone/lib/ozone-manager-<version>.jar".into());
        }
    }
    if !missing.is_empty() {
        return Err(HarnessError::BadInput(format!(
            "{}: not an Ozone distribution (as `mvn package -Pdist` writes hadoop-ozone/dist/target/ozone-<version>/): missing {}",
            path.display(),
            missing.join(", ")
        )));
    }
    Ok(Dist {
        root,
        version: version.unwrap_or_default(),
        _unpacked: unpacked,
    })
}

/// 12 hex digits of a SHA-256 over the distribution's jars: each name and its bytes, by name.
pub fn dist_digest(dist: &Dist) -> Result<String> {
    let lib = dist.root.join("share/ozone/lib");
    let mut names: Vec<String> = std::fs::read_dir(&lib)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", lib.display())))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jar"))
        .collect();
    names.sort();
    let mut hasher = Sha256::new();
    for name in &names {
        let bytes = std::fs::read(lib.join(name))
            .map_err(|e| HarnessError::BadInput(format!("{}: {e}", lib.join(name).display())))?;
        hasher.update(name.as_bytes());
        hasher.update([0u8]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(short_hex(hasher))
}

/// A distribution's `<artifact>.classpath` (`classpath=$HDDS_LIB_JARS_DIR/a.jar:...`, the module
/// jar appended or not) as the image's launcher reads it: one /opt/ozone/lib path a line, the
/// module jar last. Every jar it names must be in share/ozone/lib.
fn image_classpath(dist: &Dist, component: &str) -> Result<String> {
    let file = dist
        .root
        .join(format!("share/ozone/classpath/{component}.classpath"));
    let text = std::fs::read_to_string(&file)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", file.display())))?;
    let module = format!("{component}-{}.jar", dist.version);
    let mut names: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line
            .trim()
            .strip_prefix("classpath=")
            .unwrap_or(line.trim());
        for entry in line.split(':').filter(|e| !e.is_empty()) {
            let name = entry.rsplit('/').next().unwrap_or(entry).to_string();
            if name.ends_with(".jar") && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names.retain(|n| *n != module);
    names.push(module);
    let lib = dist.root.join("share/ozone/lib");
    if let Some(absent) = names.iter().find(|n| !lib.join(n).is_file()) {
        return Err(HarnessError::BadInput(format!(
            "{}: names {absent}, which share/ozone/lib lacks",
            file.display()
        )));
    }
    Ok(names
        .iter()
        .map(|n| format!("/opt/ozone/lib/{n}\n"))
        .collect())
}

/// A distribution: chaos-ozone:dist-<version>-<digest>, built unless it is there (or rebuilt
/// with `force`), from images/ozone's Dockerfile, launcher, entrypoint and configuration with
/// the distribution's jars and classpaths. Returns the tag.
pub async fn ensure_dist(docker: &Docker, repo: &Path, path: &Path, force: bool) -> Result<String> {
    let dist = find_dist(path)?;
    let tag = format!("chaos-ozone:dist-{}-{}", dist.version, dist_digest(&dist)?);
    if !force && images::exists(docker, &tag).await {
        return Ok(tag);
    }
    let label = format!(
        "LABEL chaos.ozone.dist=\"{}\"\n",
        path.display().to_string().replace('"', "")
    );
    build_dist_image(docker, repo, &dist, &tag, &label).await?;
    Ok(tag)
}

/// The image of a distribution found by [`find_dist`], tagged `tag`, with `labels` (Dockerfile
/// `LABEL` lines) saying where it came from: the dist path's build, and the source path's
/// after its Maven build.
pub(crate) async fn build_dist_image(
    docker: &Docker,
    repo: &Path,
    dist: &Dist,
    tag: &str,
    labels: &str,
) -> Result<()> {
    // Only the jars some component's classpath names go into the image, as with a release.
    let mut classpaths = Vec::new();
    let mut used: std::collections::BTreeSet<String> = Default::default();
    for c in COMPONENTS {
        let text = image_classpath(dist, c)?;
        used.extend(
            text.lines()
                .map(|l| l.trim_start_matches("/opt/ozone/lib/").to_string()),
        );
        classpaths.push((c, text));
    }
    images::ensure_base(docker, repo, false).await?;
    let work = TempDir::new("ozone-dist-context")?;
    let ctx = &work.0;
    let io =
        |e: std::io::Error| HarnessError::infra(format!("cannot stage the build context: {e}"));
    for sub in ["lib", "classpath", "conf"] {
        std::fs::create_dir_all(ctx.join(sub)).map_err(io)?;
    }
    let lib = dist.root.join("share/ozone/lib");
    for name in &used {
        let (from, to) = (lib.join(name), ctx.join("lib").join(name));
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(io)?;
        }
    }
    for (c, text) in &classpaths {
        std::fs::write(ctx.join("classpath").join(format!("{c}.classpath")), text).map_err(io)?;
    }
    let here = images::project_root(repo).join("images/ozone");
    for file in ["ozone", "entrypoint.sh", "envtoconf", "cds-train"] {
        std::fs::copy(here.join(file), ctx.join(file)).map_err(io)?;
    }
    for entry in std::fs::read_dir(here.join("conf")).map_err(io)?.flatten() {
        std::fs::copy(entry.path(), ctx.join("conf").join(entry.file_name())).map_err(io)?;
    }
    // Byteman's agent and chaos's rule helper, as the release image has them (JVM faults).
    let staged = std::process::Command::new(here.join("byteman.sh"))
        .arg(ctx)
        .status()
        .map_err(io)?;
    if !staged.success() {
        return Err(HarnessError::infra(
            "images/ozone/byteman.sh could not stage Byteman's agent (its message is above)",
        ));
    }
    let dockerfile = std::fs::read_to_string(here.join("Dockerfile")).map_err(io)?;
    let dockerfile = dockerfile.replace(
        "ARG OZONE_VERSION\n",
        &format!("ARG OZONE_VERSION={}\n{labels}", dist.version),
    );
    std::fs::write(ctx.join("Dockerfile"), dockerfile).map_err(io)?;
    eprintln!(
        "{} jars of {} on the classpaths of {} components",
        used.len(),
        dist.root.display(),
        COMPONENTS.len()
    );
    images::build_image(docker, tag, ctx, "Dockerfile").await
}

/// The file names of patches, as labels and progress lines show them.
pub(crate) fn patch_names(patches: &[PathBuf]) -> Vec<String> {
    patches
        .iter()
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_tags() {
        assert!(valid_version("2.2.0"));
        assert!(valid_version("2.3.0-SNAPSHOT"));
        assert!(!valid_version("2.2"));
        assert!(!valid_version("latest"));
        assert!(!valid_version("2.2.0-"));
        let dir = std::env::temp_dir().join(format!("chaos-tag-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.patch"), dir.join("b.patch"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        // sha256("ab") = fb8e20fc2e4c3f24...
        assert_eq!(
            patched_tag("2.2.0", &[a.clone(), b.clone()]).unwrap(),
            "chaos-ozone:2.2.0-pfb8e20fc2e4c"
        );
        assert_ne!(
            patched_tag("2.2.0", &[b.clone(), a.clone()]).unwrap(),
            patched_tag("2.2.0", &[a.clone(), b.clone()]).unwrap()
        );
        assert!(check_patch_args("2.2.0", &[dir.join("none.patch")]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_folder_that_is_not_a_distribution_says_what_is_missing() {
        let dir = std::env::temp_dir().join(format!("chaos-dist-test-{}", std::process::id()));
        let root = dir.join("ozone-2.2.0");
        std::fs::create_dir_all(root.join("share/ozone/lib")).unwrap();
        std::fs::create_dir_all(root.join("etc/hadoop")).unwrap();
        let message = match find_dist(&dir) {
            Err(HarnessError::BadInput(m)) => m,
            _ => panic!("not a distribution"),
        };
        assert!(message.contains("share/ozone/classpath/"), "{message}");
        assert!(message.contains("libexec/"), "{message}");
        assert!(!message.contains("etc/hadoop"), "{message}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
