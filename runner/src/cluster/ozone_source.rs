//! Ozone images of a source tree (issue 40): `chaos images build ozone --source DIR`,
//! `--build src:DIR[+fixes/X.patch]` in compare, `OZONE_SOURCE=DIR[+X.patch]` for runs.
//!
//! The tree is built with Ozone's own Maven dist build ([`MVN_ARGS`]: the flags that build
//! it from Maven Central alone), and the distribution it writes
//! (`hadoop-ozone/dist/target/ozone-<version>/`) goes through the dist path
//! (`ozone_build::find_dist`, the same image). The tag is
//! `chaos-ozone:src-<version>-<commit>[-d<digest of uncommitted changes>][-p<digest of the
//! patches>]`, computed before Maven runs: an image of that tag already here is reused and
//! Maven does not run. Patches are applied to a copy of the tree (a temporary folder removed
//! on every way out), never to DIR. The Maven repository is kept between builds in
//! `~/.cache/chaos/m2-source`.
//!
//! Hadoop's native library: the dist profile downloads libhadoop from outside Maven Central
//! and links it in `target/native-lib/`; the build skips the download
//! (`-Ddownload.plugin.skip=true`) and makes that folder empty beforehand, so the image has no
//! libhadoop (Hadoop's Java fallbacks run) and says so in its `chaos.ozone.native-lib` label.
//!
//! Bad input (exit 254): a folder that is not an Ozone source tree names the file it lacks. A
//! failing build (exit 255) names the module and Maven's first error line and keeps its log;
//! Maven or Java 17 missing (255) says what to install.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use bollard::Docker;
use sha2::{Digest, Sha256};

use crate::cluster::images;
use crate::cluster::ozone_build::{self, short_hex, TempDir};
use crate::error::{HarnessError, Result};

/// Ozone's dist build with what makes it work from Maven Central alone
/// (shared/notes/ozone-from-source.md): no iceberg profile, ranger 2.8.0 (2.9.0 is not on
/// Central), no Recon web UI and no downloads (Node, libhadoop), no integration-test modules.
pub const MVN_ARGS: [&str; 16] = [
    "-B",
    "-T",
    "2",
    "-DskipTests",
    "-DskipDocs",
    "-Djacoco.skip",
    "-Dmaven.javadoc.skip=true",
    "-DskipRecon",
    "-Ddownload.plugin.skip=true",
    "-Dcyclonedx.skip=true",
    "-Dmaven.source.skip=true",
    "-Dranger.version=2.8.0",
    "-pl",
    "!:ozone-mini-cluster,!:ozone-integration-test,!:ozone-integration-test-recon,!:ozone-integration-test-s3",
    "-P",
    "dist,!jdk11-with-iceberg",
];

/// What the image's `chaos.ozone.native-lib` label says.
pub const NATIVE_LIB: &str =
    "none: libhadoop not downloaded (-Ddownload.plugin.skip=true, target/native-lib left empty); Hadoop's Java fallbacks run";

/// The files that make a folder an Ozone source tree, checked in order.
const SOURCE_PARTS: [&str; 4] = [
    "pom.xml",
    "hadoop-ozone/pom.xml",
    "hadoop-ozone/dist/pom.xml",
    "hadoop-hdds/pom.xml",
];

/// A source tree as found: its folder, the version of its root pom, and what names its
/// contents (the commit and a digest of uncommitted changes, or a digest of every file when
/// it is not a git checkout).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceTree {
    pub dir: PathBuf,
    pub version: String,
    pub state: TreeState,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeState {
    /// A git checkout: the commit (12 hex digits) and, when the tree differs from it, 12 hex
    /// of a SHA-256 over `git diff HEAD` and the untracked files.
    Git {
        commit: String,
        dirty: Option<String>,
    },
    /// Not a git checkout: 12 hex over every file's path and bytes (`target/` and `.git/` left out).
    Files(String),
}

/// `src:DIR[+PATCH...]`, `OZONE_SOURCE`'s value too: the folder and the patches.
pub fn parse_spec(text: &str) -> std::result::Result<(PathBuf, Vec<PathBuf>), String> {
    let mut parts = text.split('+');
    let dir = parts.next().unwrap_or_default();
    if dir.is_empty() {
        return Err("src:DIR needs a folder (an Ozone source tree)".into());
    }
    let patches: Vec<PathBuf> = parts.map(PathBuf::from).collect();
    if patches.iter().any(|p| p.as_os_str().is_empty()) {
        return Err(format!("src:{text}: an empty patch name after `+`"));
    }
    Ok((PathBuf::from(dir), patches))
}

/// The image's tag: `chaos-ozone:src-<version>-<commit>[-d<hex>][-p<hex>]` (a tree that is not
/// a git checkout: `src-<version>-t<hex>`).
pub fn source_tag(tree: &SourceTree, patches: Option<&str>) -> String {
    let mut tag = format!("chaos-ozone:src-{}-", tree.version);
    match &tree.state {
        TreeState::Git { commit, dirty } => {
            tag.push_str(commit);
            if let Some(d) = dirty {
                tag.push_str(&format!("-d{d}"));
            }
        }
        TreeState::Files(digest) => tag.push_str(&format!("t{digest}")),
    }
    if let Some(p) = patches {
        tag.push_str(&format!("-p{p}"));
    }
    tag
}

/// 12 hex over the patches' bytes, in order (as `ozone_build::patched_tag` digests them).
pub fn patches_digest(patches: &[PathBuf]) -> Result<Option<String>> {
    if patches.is_empty() {
        return Ok(None);
    }
    let mut hasher = Sha256::new();
    for p in patches {
        let bytes = std::fs::read(p).map_err(|e| {
            HarnessError::BadInput(format!("patch {}: cannot read it: {e}", p.display()))
        })?;
        hasher.update(&bytes);
    }
    Ok(Some(short_hex(hasher)))
}

/// Whether Maven has to run: not when an image of the tag is here, unless forced.
pub fn needs_build(image_here: bool, force: bool) -> bool {
    force || !image_here
}

/// Checks that `dir` is an Ozone source tree (naming the first file it lacks) and reads its
/// version and state.
pub fn find_source(dir: &Path) -> Result<SourceTree> {
    if !dir.is_dir() {
        return Err(HarnessError::BadInput(format!(
            "{}: no such folder (an Ozone source tree, a checkout of apache/ozone)",
            dir.display()
        )));
    }
    if let Some(missing) = SOURCE_PARTS.iter().find(|p| !dir.join(p).is_file()) {
        return Err(HarnessError::BadInput(format!(
            "{}: not an Ozone source tree: missing {missing}",
            dir.display()
        )));
    }
    let pom = std::fs::read_to_string(dir.join("pom.xml"))
        .map_err(|e| HarnessError::BadInput(format!("{}/pom.xml: {e}", dir.display())))?;
    let version = pom_version(&pom).ok_or_else(|| {
        HarnessError::BadInput(format!(
            "{}/pom.xml: not Ozone's root pom (no <artifactId>ozone-main</artifactId> with a <version> like 2.3.0-SNAPSHOT)",
            dir.display()
        ))
    })?;
    Ok(SourceTree {
        dir: dir.to_path_buf(),
        version,
        state: tree_state(dir)?,
    })
}

/// The version right after `<artifactId>ozone-main</artifactId>` in the root pom.
fn pom_version(pom: &str) -> Option<String> {
    let after = pom.split_once("<artifactId>ozone-main</artifactId>")?.1;
    let version = after
        .split_once("<version>")?
        .1
        .split_once("</version>")?
        .0
        .trim();
    ozone_build::valid_version(version).then(|| version.to_string())
}

fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

fn tree_state(dir: &Path) -> Result<TreeState> {
    // Only a tree that is the top of its own checkout counts as one (not a folder inside
    // another repository).
    let top = git(dir, &["rev-parse", "--show-toplevel"])
        .map(|t| PathBuf::from(String::from_utf8_lossy(&t).trim()));
    let is_top = top.is_some_and(|t| {
        t.canonicalize().ok() == dir.canonicalize().ok() && !t.as_os_str().is_empty()
    });
    if is_top {
        if let Some(head) = git(dir, &["rev-parse", "HEAD"]) {
            let commit: String = String::from_utf8_lossy(&head)
                .trim()
                .chars()
                .take(12)
                .collect();
            let status = git(dir, &["status", "--porcelain"]).unwrap_or_default();
            let dirty = if status.is_empty() {
                None
            } else {
                let mut hasher = Sha256::new();
                hasher.update(git(dir, &["diff", "--binary", "HEAD"]).unwrap_or_default());
                let untracked = git(dir, &["ls-files", "-z", "--others", "--exclude-standard"])
                    .unwrap_or_default();
                for name in untracked.split(|b| *b == 0).filter(|n| !n.is_empty()) {
                    hasher.update(name);
                    hasher.update([0u8]);
                    let path = dir.join(String::from_utf8_lossy(name).as_ref());
                    hasher.update(std::fs::read(&path).unwrap_or_default());
                }
                Some(short_hex(hasher))
            };
            return Ok(TreeState::Git { commit, dirty });
        }
    }
    let mut files = Vec::new();
    source_files(dir, Path::new(""), &mut files)?;
    files.sort();
    let mut hasher = Sha256::new();
    for rel in &files {
        let bytes = std::fs::read(dir.join(rel))
            .map_err(|e| HarnessError::BadInput(format!("{}: {e}", dir.join(rel).display())))?;
        hasher.update(rel.to_string_lossy().as_bytes());
        hasher.update([0u8]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(TreeState::Files(short_hex(hasher)))
}

/// Whether a folder of the tree is the build's or git's, not the source's: `.git`, and a
/// `target` beside a pom.xml (Maven's output).
fn is_output(parent: &Path, name: &str) -> bool {
    name == ".git" || (name == "target" && parent.join("pom.xml").is_file())
}

/// Every regular file of the tree, relative to `root`, outputs left out.
fn source_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let here = root.join(rel);
    let entries = std::fs::read_dir(&here)
        .map_err(|e| HarnessError::BadInput(format!("{}: {e}", here.display())))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry
            .file_type()
            .map_err(|e| HarnessError::BadInput(format!("{}: {e}", entry.path().display())))?;
        if kind.is_dir() {
            if !is_output(&here, &name) {
                source_files(root, &rel.join(&name), out)?;
            }
        } else if kind.is_file() {
            out.push(rel.join(&name));
        }
    }
    Ok(())
}

/// Copies the tree's sources (not `.git`, not Maven's `target/` folders; symbolic links as
/// links) into `to`, which must exist.
pub fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let io = |p: &Path, e: std::io::Error| {
        HarnessError::infra(format!(
            "cannot copy the source tree ({}): {e}",
            p.display()
        ))
    };
    for entry in std::fs::read_dir(from).map_err(|e| io(from, e))?.flatten() {
        let name = entry.file_name();
        let (src, dst) = (entry.path(), to.join(&name));
        let kind = entry.file_type().map_err(|e| io(&src, e))?;
        if kind.is_dir() {
            if is_output(from, &name.to_string_lossy()) {
                continue;
            }
            std::fs::create_dir(&dst).map_err(|e| io(&dst, e))?;
            copy_tree(&src, &dst)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(|e| io(&src, e))?;
            std::os::unix::fs::symlink(target, &dst).map_err(|e| io(&dst, e))?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| io(&src, e))?;
        }
    }
    Ok(())
}

/// A copy of the tree with the patches applied in order (`patch -p1`, no fuzz), in a
/// temporary folder removed when the returned handle drops. DIR is only read.
pub(crate) fn patched_copy(tree: &Path, patches: &[PathBuf]) -> Result<TempDir> {
    let work = TempDir::new("ozone-source")?;
    let copy = &work.0;
    eprintln!(
        "copying {} to {} to apply {} patch(es)",
        tree.display(),
        copy.display(),
        patches.len()
    );
    copy_tree(tree, copy)?;
    for p in patches {
        let patch = p
            .canonicalize()
            .map_err(|e| HarnessError::BadInput(format!("patch {}: {e}", p.display())))?;
        let out = Command::new("patch")
            .args(["-p1", "-F0", "--batch", "--forward", "-s", "-i"])
            .arg(&patch)
            .current_dir(copy)
            .output()
            .map_err(|e| HarnessError::infra(format!("cannot run patch (install it): {e}")))?;
        if !out.status.success() {
            let text = String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr);
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output");
            return Err(HarnessError::infra(format!(
                "patch {} does not apply to {}: {}",
                p.display(),
                tree.display(),
                first.trim()
            )));
        }
    }
    Ok(work)
}

/// Maven and Java 17 or newer, looked up on `path` (PATH's value), else what to install.
pub fn check_tools(path: &std::ffi::OsStr) -> Result<()> {
    let find = |name: &str| {
        std::env::split_paths(path)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    };
    let Some(java) = find("java") else {
        return Err(HarnessError::infra(
            "building Ozone from source needs Java 17 or newer, and there is no java: install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless)",
        ));
    };
    if find("mvn").is_none() {
        return Err(HarnessError::infra(
            "building Ozone from source needs Maven, and there is no mvn: install it (Debian: apt-get install maven)",
        ));
    }
    let out = Command::new(&java)
        .arg("-version")
        .output()
        .map_err(|e| HarnessError::infra(format!("cannot run {}: {e}", java.display())))?;
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    let major = java_major(&text);
    if major.is_none_or(|m| m < 17) {
        return Err(HarnessError::infra(format!(
            "building Ozone from source needs Java 17 or newer, and {} is {}: install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless) and put it first on PATH",
            java.display(),
            text.lines().next().unwrap_or("unknown").trim()
        )));
    }
    Ok(())
}

/// The major version in `java -version`'s first line (`openjdk version "17.0.15"` is 17,
/// `"1.8.0_292"` is 8).
fn java_major(text: &str) -> Option<u32> {
    let quoted = text.split('"').nth(1)?;
    let mut parts = quoted.split(['.', '_', '-', '+']);
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 {
        parts.next()?.parse().ok()
    } else {
        Some(first)
    }
}

/// The Maven repository kept between source builds.
pub fn maven_repository() -> PathBuf {
    cache_dir().join("m2-source")
}

fn cache_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into())).join(".cache/chaos")
}

/// Where a build that failed keeps Maven's log.
fn log_path(tag: &str) -> PathBuf {
    cache_dir()
        .join("source-builds")
        .join(format!("{}.log", tag.replace([':', '/'], "_")))
}

/// The distribution a dist build of the tree writes.
pub fn built_dist(tree: &Path, version: &str) -> PathBuf {
    tree.join(format!("hadoop-ozone/dist/target/ozone-{version}"))
}

/// What Maven's output says of a failed build: the module (`on project X`, else the last
/// `Building` line's) and its first `[ERROR]` line.
pub fn maven_failure(lines: &[String]) -> (String, String) {
    let errors: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("[ERROR]") && l.len() > "[ERROR] ".len())
        .collect();
    let module = errors
        .iter()
        .find_map(|l| {
            l.split_once(" on project ")
                .map(|(_, p)| p.split([':', ' ']).next().unwrap_or(p).to_string())
        })
        .or_else(|| lines.iter().rev().find_map(|l| module_name(l)))
        .unwrap_or_else(|| "an unknown module".into());
    let first = errors
        .first()
        .map(|l| {
            // Maven nests some: `[ERROR] [ERROR] Some problems were encountered ...`.
            let mut text = l.as_str();
            while let Some(rest) = text.trim_start().strip_prefix("[ERROR]") {
                text = rest;
            }
            text.trim().to_string()
        })
        .unwrap_or_else(|| "no [ERROR] line".into());
    (module, first)
}

/// `[INFO] Building Apache Ozone Manager 2.3.0-SNAPSHOT [12/58]` -> (`Apache Ozone Manager`,
/// `12/58`); not Maven's other `Building` lines (`Building jar: ...`).
fn module_line(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("[INFO] Building ")?;
    let (name, count) = rest.rsplit_once(" [")?;
    let count = count.strip_suffix(']')?;
    if !count.contains('/') {
        return None;
    }
    // Maven pads the line to a width: `Apache Ozone Manager 2.3.0-SNAPSHOT      [12/58]`.
    let name = name.trim_end();
    let name = name.rsplit_once(' ').map_or(name, |(n, _)| n);
    Some((name.to_string(), count.to_string()))
}

fn module_name(line: &str) -> Option<String> {
    module_line(line).map(|(name, _)| name)
}

/// `module 12/58: Apache Ozone Manager`, the news of a module's start.
fn module_news(line: &str) -> Option<String> {
    module_line(line).map(|(name, count)| format!("module {count}: {name}"))
}

/// Runs the dist build in `tree`, its output in a log: the log is removed when the build
/// succeeds and kept (and named) when it fails.
fn run_maven(tree: &Path, tag: &str) -> Result<()> {
    // The dist profile links libhadoop in target/native-lib/ after a download it skips here.
    let native = tree.join("target/native-lib");
    std::fs::create_dir_all(&native)
        .map_err(|e| HarnessError::infra(format!("cannot create {}: {e}", native.display())))?;
    let log = log_path(tag);
    if let Some(parent) = log.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| HarnessError::infra(format!("cannot create {}: {e}", parent.display())))?;
    }
    let mut file = std::fs::File::create(&log)
        .map_err(|e| HarnessError::infra(format!("cannot write {}: {e}", log.display())))?;
    let stderr = file
        .try_clone()
        .map_err(|e| HarnessError::infra(format!("cannot write {}: {e}", log.display())))?;
    let repository = maven_repository();
    let mut child = Command::new("mvn")
        .arg(format!("-Dmaven.repo.local={}", repository.display()))
        .args(MVN_ARGS)
        .arg("package")
        .env("MAVEN_OPTS", "-Xmx4096m")
        .current_dir(tree)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .spawn()
        .map_err(|e| HarnessError::infra(format!("cannot run mvn: {e}")))?;
    eprintln!(
        "building Ozone from {} with Maven: repository {}, log {}",
        tree.display(),
        repository.display(),
        log.display()
    );
    let activity = crate::activity::Activity::start(&format!("mvn in {}", tree.display()));
    let mut lines: Vec<String> = Vec::new();
    let (mut downloads, mut module) = (0u64, String::new());
    let news = |module: &str, downloads: u64| match downloads {
        0 => module.to_string(),
        n => format!("{module}; {n} files downloaded"),
    };
    if let Some(out) = child.stdout.take() {
        for line in std::io::BufReader::new(out).lines().map_while(|l| l.ok()) {
            let _ = writeln!(file, "{line}");
            if line.starts_with("[INFO] Downloaded from") {
                downloads += 1;
                activity.note(&news(&module, downloads));
            } else if let Some(started) = module_news(&line) {
                module = started;
                activity.note(&news(&module, downloads));
            }
            // Every module's start and Maven's first [ERROR] lines: what a failure is told from.
            if (line.starts_with("[ERROR]") && lines.len() < 400) || module_line(&line).is_some() {
                lines.push(line);
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| HarnessError::infra(format!("mvn: {e}")))?;
    if status.success() {
        activity.finish(&format!("Ozone built from {}", tree.display()));
        let _ = std::fs::remove_file(&log);
        return Ok(());
    }
    drop(activity);
    let (module, first) = maven_failure(&lines);
    Err(HarnessError::infra(format!(
        "building Ozone from {} failed in {module}: {first} (Maven's log: {})",
        tree.display(),
        log.display()
    )))
}

/// Checks a `src:` build before anything is built: a source tree, its patches readable files.
pub fn check_args(dir: &Path, patches: &[PathBuf]) -> Result<SourceTree> {
    let tree = find_source(dir)?;
    for p in patches {
        if !p.is_file() {
            return Err(HarnessError::BadInput(format!(
                "patch {}: no such file",
                p.display()
            )));
        }
    }
    Ok(tree)
}

/// A source tree, plus patches: its image, reused when it is here (or rebuilt with `force`),
/// else built with Maven (in a patched copy when there are patches) and handed to the dist
/// path. Returns the tag.
pub async fn ensure_source(
    docker: &Docker,
    repo: &Path,
    dir: &Path,
    patches: &[PathBuf],
    force: bool,
) -> Result<String> {
    let tree = check_args(dir, patches)?;
    let tag = source_tag(&tree, patches_digest(patches)?.as_deref());
    if !needs_build(images::exists(docker, &tag).await, force) {
        eprintln!("{tag} is here: {} not rebuilt", dir.display());
        return Ok(tag);
    }
    check_tools(&std::env::var_os("PATH").unwrap_or_default())?;
    let (dir_moved, patches_moved) = (dir.to_path_buf(), patches.to_vec());
    let built_tag = tag.clone();
    // Maven runs on a blocking thread; the copy (with the patches) goes with the handle.
    let (copy, dist) = tokio::task::spawn_blocking(move || -> Result<_> {
        let (dir, patches) = (dir_moved, patches_moved);
        let copy = if patches.is_empty() {
            None
        } else {
            Some(patched_copy(&dir, &patches)?)
        };
        let build_dir = copy.as_ref().map_or(dir.clone(), |c| c.0.clone());
        run_maven(&build_dir, &built_tag)?;
        let dist = ozone_build::find_dist(&built_dist(&build_dir, &tree.version))
            .map_err(|e| HarnessError::infra(format!("Maven's build ended, but {e}")))?;
        Ok((copy, dist))
    })
    .await
    .map_err(|e| HarnessError::infra(format!("the source build stopped: {e}")))??;
    let mut labels = format!(
        "LABEL chaos.ozone.source=\"{}\" chaos.ozone.native-lib=\"{NATIVE_LIB}\"\n",
        dir.display().to_string().replace('"', "")
    );
    if !patches.is_empty() {
        let names = super::ozone_build::patch_names(patches);
        labels.push_str(&format!(
            "LABEL chaos.ozone.patches=\"{}\"\n",
            names.join(" ")
        ));
    }
    ozone_build::build_dist_image(docker, repo, &dist, &tag, &labels).await?;
    drop(dist);
    drop(copy);
    Ok(tag)
}

#[cfg(test)]
mod tests;
