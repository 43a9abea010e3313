//! Ozone images with a dependency swapped (issue 41): a release (plus patches) whose Apache
//! Ratis jars are another Ratis version's from Maven Central. `2.2.0+ratis=3.3.0` (and
//! `2.2.0+ratis=3.3.0+fixes/X.patch`) in `chaos compare` and a suite's `builds:`;
//! `chaos images build ozone --swap ratis=3.3.0 [--patch X] [--version V]`.
//!
//! The image is `chaos-ozone:<version>-ratis<ratis version>[-p<digest of the patches>]`, FROM
//! the release image (or the release-plus-patches image, the patches compiled against the
//! release's own Ratis): images/ozone/swap.sh has Maven resolve the requested version's own
//! dependency tree, [`plan_swap`] decides which of the image's `ratis-*` jars go and which come,
//! [`check_one_version`] refuses a jar folder left with two versions of one artifact, and
//! every component's classpath file is rewritten to name the new jars.
//!
//! Bad input (exit 254, one line): a name other than `ratis`, a version Maven Central does not
//! have, a swap that would leave two versions of one artifact. A build that fails otherwise is
//! 255. Neither leaves an image, a container or a temporary folder behind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use bollard::Docker;

use crate::cluster::images;
use crate::cluster::ozone_build::{self, TempDir};
use crate::cluster::ozone_source;
use crate::error::{HarnessError, Result};

/// A dependency of Ozone's whose jars a build can swap for another version's.
#[derive(Debug, PartialEq, Eq)]
pub struct Dependency {
    /// What a build names it by: `ratis` in `2.2.0+ratis=3.3.0`.
    pub name: &'static str,
    pub title: &'static str,
    /// Its Maven group: every artifact of it in the image is swapped.
    pub group: &'static str,
    /// What its artifacts' jar names start with in /opt/ozone/lib.
    pub prefix: &'static str,
    /// The artifact whose version is the dependency's (whose absence means no such release).
    pub core: &'static str,
}

/// The dependencies a build can swap.
pub const DEPENDENCIES: [Dependency; 1] = [Dependency {
    name: "ratis",
    title: "Apache Ratis",
    group: "org.apache.ratis",
    prefix: "ratis-",
    core: "ratis-server",
}];

/// `ratis=3.3.0`: which dependency, at which version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swap {
    pub name: String,
    pub version: String,
}

impl Swap {
    /// `NAME=VERSION`; a name no entry of [`DEPENDENCIES`] has, or a version that is not one, is
    /// an error that says what is supported (the caller says where it was given).
    pub fn parse(text: &str) -> std::result::Result<Swap, String> {
        let supported = DEPENDENCIES
            .iter()
            .map(|d| {
                format!(
                    "`{}=VERSION` ({}'s jars from Maven Central)",
                    d.name, d.title
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let Some((name, version)) = text.split_once('=') else {
            return Err(format!("a swap is NAME=VERSION; supported: {supported}"));
        };
        if !DEPENDENCIES.iter().any(|d| d.name == name) {
            return Err(format!("`{name}` cannot be swapped; only {supported}"));
        }
        if !ozone_build::valid_version(version) {
            return Err(format!("'{version}' is not a {name} version (like 3.3.0)"));
        }
        Ok(Swap {
            name: name.to_string(),
            version: version.to_string(),
        })
    }

    pub fn dependency(&self) -> &'static Dependency {
        DEPENDENCIES
            .iter()
            .find(|d| d.name == self.name)
            .unwrap_or(&DEPENDENCIES[0])
    }
}

impl std::fmt::Display for Swap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.name, self.version)
    }
}

/// Whether a `+` part of a build is a swap (`ratis=3.3.0`) rather than a patch path: a word
/// of letters, digits, `-` and `_` before an `=`.
pub fn is_swap(part: &str) -> bool {
    part.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

/// `chaos-ozone:<version>-<name><swap version>[-p<12 hex over the patches' bytes>]`.
pub fn swapped_tag(version: &str, swap: &Swap, patches: &[PathBuf]) -> Result<String> {
    let mut tag = format!("chaos-ozone:{version}-{}{}", swap.name, swap.version);
    if let Some(digest) = ozone_source::patches_digest(patches)? {
        tag.push_str(&format!("-p{digest}"));
    }
    Ok(tag)
}

/// The arguments of a swapped build, checked before anything is built.
pub fn check_swap_args(version: &str, swap: &Swap, patches: &[PathBuf]) -> Result<()> {
    Swap::parse(&swap.to_string()).map_err(|e| HarnessError::BadInput(format!("{swap}: {e}")))?;
    ozone_build::check_patch_args(version, patches)
}

/// `ratis-server-3.2.1.jar` -> (`ratis-server`, `3.2.1`): the artifact ends before the first
/// `-<digit>` after which the rest is a version (build.sh's
/// `-[0-9][^-]*(-[A-Za-z0-9_]+)*\.jar$`; a classifier stays in the version).
pub fn split_jar(name: &str) -> Option<(&str, &str)> {
    let stem = name.strip_suffix(".jar")?;
    let bytes = stem.as_bytes();
    (0..bytes.len().saturating_sub(1))
        .filter(|&i| bytes[i] == b'-' && bytes[i + 1].is_ascii_digit())
        .find(|&i| {
            stem[i + 1..].split('-').skip(1).all(|part| {
                !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
        })
        .map(|i| (&stem[..i], &stem[i + 1..]))
}

/// The versions of each artifact in a jar listing.
fn versions(jars: &[String]) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut by_artifact: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for jar in jars {
        if let Some((artifact, version)) = split_jar(jar) {
            by_artifact.entry(artifact).or_default().insert(version);
        }
    }
    by_artifact
}

/// Whether version `a` is newer than `b`, part by part (numbers as numbers).
fn newer(a: &str, b: &str) -> bool {
    let parts = |v: &str| -> Vec<(u64, String)> {
        v.split(['.', '-'])
            .map(|p| (p.parse().unwrap_or(0), p.to_string()))
            .collect()
    };
    parts(a) > parts(b)
}

/// What a swap does to the image's jar folder.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SwapPlan {
    /// (the image's jar, the jar that takes its place), by the image's jar name.
    pub replace: Vec<(String, String)>,
    /// Jars of the dependency the image did not have (new in the version's tree): on every
    /// classpath that names the dependency, after its last jar.
    pub added: Vec<String>,
    /// The image's jars at the dependency's own version that stay, Maven Central lacking them at
    /// the requested one (the image's `chaos.ozone.swap.kept` label names them).
    pub kept: Vec<String>,
    /// What it did and why, a sentence each.
    pub notes: Vec<String>,
}

/// The artifacts to ask Maven for: the image's jars of the dependency at the dependency's own
/// version (its core artifact's; the core first). Artifacts versioned on their own
/// (ratis-thirdparty-misc) come with the version's tree.
pub fn requested(
    dep: &Dependency,
    image_jars: &[String],
) -> std::result::Result<Vec<String>, String> {
    let ours: Vec<(&str, &str)> = image_jars
        .iter()
        .filter(|j| j.starts_with(dep.prefix))
        .filter_map(|j| split_jar(j))
        .collect();
    let Some(&(_, own)) = ours.iter().find(|(a, _)| *a == dep.core) else {
        return Err(format!(
            "the image has no {}-<version>.jar in /opt/ozone/lib: no {} to swap",
            dep.core, dep.title
        ));
    };
    let mut wanted = vec![dep.core.to_string()];
    for (artifact, version) in ours {
        if version == own && !wanted.iter().any(|w| w == artifact) {
            wanted.push(artifact.to_string());
        }
    }
    Ok(wanted)
}

/// Which of the image's jars of the dependency go and which come, from what Maven resolved:
/// `resolved` as swap.sh names them (`<groupId>.<artifactId>-<version>.jar`, the whole tree),
/// `absent` the artifacts Central lacks at `version`.
///
/// - An artifact at the dependency's own version in the image is replaced by the resolved one;
///   one Central lacks at `version` stays as it is, and a note says so.
/// - An artifact versioned on its own (ratis-thirdparty-misc) is replaced when the version's
///   tree asks for a newer one, else it stays (the newer of the two).
/// - An artifact of the dependency's group the image lacks is added.
/// - Other groups in the tree (slf4j, ...) are not swapped: the image keeps its own; a note
///   names them.
pub fn plan_swap(
    dep: &Dependency,
    version: &str,
    image_jars: &[String],
    resolved: &[String],
    absent: &[String],
) -> std::result::Result<SwapPlan, String> {
    let group_prefix = format!("{}.", dep.group);
    let mut theirs: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    let mut others: Vec<String> = Vec::new();
    for jar in resolved {
        match jar
            .strip_prefix(&group_prefix)
            .and_then(|n| Some((n, split_jar(n)?)))
        {
            Some((name, (artifact, v))) => {
                theirs.insert(artifact, (name, v));
            }
            None => others.push(jar.clone()),
        }
    }
    let own = own_version(dep, image_jars)
        .ok_or_else(|| format!("the image has no {}-<version>.jar", dep.core))?;
    if !theirs.contains_key(dep.core) {
        return Err(format!(
            "Maven resolved no {}:{}:{version}",
            dep.group, dep.core
        ));
    }
    let mut plan = SwapPlan::default();
    let mut swapped = 0;
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for jar in image_jars.iter().filter(|j| j.starts_with(dep.prefix)) {
        let Some((artifact, mine)) = split_jar(jar) else {
            continue;
        };
        seen.insert(artifact);
        match theirs.get(artifact) {
            Some(&(name, _)) if mine == own => {
                if name != jar {
                    plan.replace.push((jar.clone(), name.to_string()));
                }
                swapped += 1;
            }
            Some(&(name, v)) if newer(v, mine) => {
                plan.replace.push((jar.clone(), name.to_string()));
                plan.notes.push(format!(
                    "{artifact} {mine} -> {v}: {} {version}'s own dependency tree asks for {v}",
                    dep.title
                ));
            }
            Some(&(_, v)) => plan.notes.push(format!(
                "{artifact} stays at {mine}: {} {version} asks for {v}, the older one",
                dep.title
            )),
            None if absent.iter().any(|a| a == artifact) => plan.kept.push(jar.clone()),
            None if mine == own => {
                return Err(format!(
                    "Maven resolved no {}:{artifact}:{version}, and the image has {jar}",
                    dep.group
                ))
            }
            None => plan.notes.push(format!(
                "{artifact} stays at {mine}: {} {version}'s tree does not name it",
                dep.title
            )),
        }
    }
    plan.notes.insert(
        0,
        format!(
            "{} {own} -> {version}: {swapped} {} jar(s) swapped",
            dep.title, dep.group
        ),
    );
    if !plan.kept.is_empty() {
        plan.notes.push(format!(
            "Maven Central has no {} of {} {version}: the image keeps {}",
            plan.kept
                .iter()
                .filter_map(|j| split_jar(j).map(|(a, _)| a))
                .collect::<Vec<_>>()
                .join(", "),
            dep.title,
            plan.kept.join(", ")
        ));
    }
    for (artifact, (name, v)) in &theirs {
        if !seen.contains(artifact) {
            plan.added.push(name.to_string());
            plan.notes.push(format!(
                "{artifact} {v} added: {} {version}'s tree has it, the image did not",
                dep.title
            ));
        }
    }
    if !others.is_empty() {
        plan.notes.push(format!(
            "not swapped (other groups in {} {version}'s tree; the image keeps its own): {}",
            dep.title,
            others.join(", ")
        ));
    }
    Ok(plan)
}

impl SwapPlan {
    /// The jar folder after the swap.
    pub fn apply(&self, image_jars: &[String]) -> Vec<String> {
        let mut jars: Vec<String> = image_jars
            .iter()
            .map(|j| {
                self.replace
                    .iter()
                    .find(|(old, _)| old == j)
                    .map_or(j.clone(), |(_, new)| new.clone())
            })
            .chain(self.added.iter().cloned())
            .collect();
        jars.sort();
        jars.dedup();
        jars
    }

    /// A classpath file (one /opt/ozone/lib path a line) after the swap: each replaced jar's
    /// line names its successor; the added jars follow the last line of the dependency.
    pub fn rewrite_classpath(&self, dep: &Dependency, text: &str) -> String {
        let lib = "/opt/ozone/lib/";
        let mut lines: Vec<String> = Vec::new();
        let mut last_ours = None;
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let name = line.rsplit('/').next().unwrap_or(line);
            let line = match self.replace.iter().find(|(old, _)| old == name) {
                Some((_, new)) => format!("{lib}{new}"),
                None => line.to_string(),
            };
            if lines.contains(&line) {
                continue;
            }
            if name.starts_with(dep.prefix) {
                last_ours = Some(lines.len());
            }
            lines.push(line);
        }
        if let Some(at) = last_ours {
            for (k, jar) in self.added.iter().enumerate() {
                lines.insert(at + 1 + k, format!("{lib}{jar}"));
            }
        }
        lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

/// The check after the jar folder is assembled: each artifact of the dependency once, and no
/// artifact with more versions than the image had (the release itself has two of a few, such as
/// stax2-api 4.2.1 and 4.2.2, which the swap leaves alone). Else the sentence that refuses it.
pub fn check_one_version(
    dep: &Dependency,
    before: &[String],
    after: &[String],
) -> std::result::Result<(), String> {
    let (was, is) = (versions(before), versions(after));
    let twice: Vec<String> = is
        .iter()
        .filter(|(artifact, v)| {
            v.len() > 1
                && (artifact.starts_with(dep.prefix)
                    || v.len() > was.get(*artifact).map_or(0, BTreeSet::len))
        })
        .map(|(artifact, v)| {
            format!(
                "{artifact} ({})",
                v.iter().copied().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    if twice.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the swap would leave /opt/ozone/lib with two versions of {}: refused",
            twice.join(", ")
        ))
    }
}

/// The image's jar folder and classpath files (component, text), read in a throwaway container.
async fn read_image(docker: &Docker, image: &str) -> Result<(Vec<String>, Vec<(String, String)>)> {
    let script = "ls /opt/ozone/lib && for f in /opt/ozone/classpath/*.classpath; do \
                  echo \"== $(basename \"$f\" .classpath)\"; cat \"$f\"; done";
    let body = bollard::models::ContainerCreateBody {
        image: Some(image.to_string()),
        entrypoint: Some(vec!["bash".into(), "-c".into(), script.into()]),
        cmd: Some(vec![]),
        labels: Some(crate::cluster::docker::run_labels("ozone-swap")),
        ..Default::default()
    };
    let name = format!(
        "chaos-ozone-swap-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    );
    let (code, output) = crate::cluster::docker::run_once(docker, &name, body).await?;
    if code != 0 {
        return Err(HarnessError::infra(format!(
            "cannot read /opt/ozone/lib of {image} (exit {code}: {})",
            output.lines().last().unwrap_or("").trim()
        )));
    }
    let (mut jars, mut classpaths) = (Vec::new(), Vec::<(String, String)>::new());
    for line in output.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(component) = line.strip_prefix("== ") {
            classpaths.push((component.to_string(), String::new()));
        } else if let Some((_, text)) = classpaths.last_mut() {
            text.push_str(line);
            text.push('\n');
        } else {
            jars.push(line.to_string());
        }
    }
    if jars.is_empty() || classpaths.is_empty() {
        return Err(HarnessError::infra(format!(
            "{image} has no jars in /opt/ozone/lib or no /opt/ozone/classpath files"
        )));
    }
    Ok((jars, classpaths))
}

/// A release (plus patches) with a dependency swapped: the image of [`swapped_tag`], built
/// unless it is there (or rebuilt with `force`). Returns the tag.
pub async fn ensure_swapped(
    docker: &Docker,
    repo: &Path,
    version: &str,
    swap: &Swap,
    patches: &[PathBuf],
    force: bool,
) -> Result<String> {
    check_swap_args(version, swap, patches)?;
    let tag = swapped_tag(version, swap, patches)?;
    if !force && images::exists(docker, &tag).await {
        return Ok(tag);
    }
    let dep = swap.dependency();
    let base = if patches.is_empty() {
        ozone_build::ensure_release(docker, repo, version).await?
    } else {
        ozone_build::ensure_patched(docker, repo, version, patches, false).await?
    };
    let (jars, classpaths) = read_image(docker, &base).await?;
    let wanted = requested(dep, &jars).map_err(|e| HarnessError::infra(format!("{base}: {e}")))?;
    let work = TempDir::new("ozone-swap")?;
    let out = work.0.join("resolved");
    let script = images::project_root(repo).join("images/ozone/swap.sh");
    let mut command = Command::new("bash");
    command
        .arg(&script)
        .arg(dep.group)
        .arg(&swap.version)
        .arg(&out)
        .args(&wanted)
        .env("CHAOS_SWAP_TITLE", dep.title)
        .env("TMPDIR", &work.0);
    let label = format!("resolving {} {} with mvn", dep.title, swap.version);
    let (status, tail) = images::run_script_quiet(label, command).await?;
    if !status.success() {
        let reason = ozone_build::script_reason(&tail);
        if reason.starts_with("Maven Central has no") {
            return Err(HarnessError::BadInput(reason));
        }
        return Err(HarnessError::infra(format!(
            "building {tag} failed: {reason}"
        )));
    }
    let listing = |path: PathBuf| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let resolved = listing(out.join("jars"));
    let absent: Vec<String> = std::fs::read_to_string(out.join("absent"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let plan = plan_swap(dep, &swap.version, &jars, &resolved, &absent)
        .map_err(|e| HarnessError::infra(format!("building {tag} failed: {e}")))?;
    check_one_version(dep, &jars, &plan.apply(&jars)).map_err(HarnessError::BadInput)?;
    for note in &plan.notes {
        eprintln!("{tag}: {note}");
    }
    // The context: the new jars, every classpath file rewritten, a Dockerfile FROM the base.
    let context = work.0.join("context");
    let io =
        |e: std::io::Error| HarnessError::infra(format!("cannot stage the build context: {e}"));
    for sub in ["lib", "classpath"] {
        std::fs::create_dir_all(context.join(sub)).map_err(io)?;
    }
    let group_prefix = format!("{}.", dep.group);
    for new in plan.replace.iter().map(|(_, n)| n).chain(&plan.added) {
        std::fs::rename(
            out.join("jars").join(format!("{group_prefix}{new}")),
            context.join("lib").join(new),
        )
        .map_err(io)?;
    }
    for (component, text) in &classpaths {
        std::fs::write(
            context
                .join("classpath")
                .join(format!("{component}.classpath")),
            plan.rewrite_classpath(dep, text),
        )
        .map_err(io)?;
    }
    let removed: Vec<&str> = plan.replace.iter().map(|(o, _)| o.as_str()).collect();
    // This checkout's training script: it says why a daemon did not start (older images' does not).
    let here = images::project_root(repo).join("images/ozone");
    std::fs::copy(here.join("cds-train"), context.join("cds-train")).map_err(io)?;
    let mut dockerfile = format!(
        "# chaos-ozone {version} with {} {}\nFROM {base}\n",
        dep.title, swap.version
    );
    if !removed.is_empty() {
        dockerfile.push_str(&format!(
            "RUN cd /opt/ozone/lib && rm {}\n",
            removed.join(" ")
        ));
    }
    dockerfile.push_str(&format!(
        "COPY lib/ /opt/ozone/lib/\nCOPY classpath/ /opt/ozone/classpath/\n\
         # One version of each {group} jar, and every jar a classpath names is there.\n\
         RUN twice=$(ls /opt/ozone/lib | grep '^{prefix}' | sed -E 's/-[0-9][^-]*(-[A-Za-z0-9_]+)*\\.jar$//' | sort | uniq -d); \
         [ -z \"$twice\" ] || {{ echo \"two versions of $twice in /opt/ozone/lib\"; exit 1; }}; \
         for f in /opt/ozone/classpath/*.classpath; do while read -r j; do \
         [ -f \"$j\" ] || {{ echo \"$f names $j, which is not in /opt/ozone/lib\"; exit 1; }}; done <\"$f\"; done\n\
         LABEL chaos.ozone.swap=\"{swap}\"{kept}\nRUN ozone version >/dev/null\n\
         # The class-data sharing archives serve only the jars they were made from; the training\n\
         # starts every daemon on the new jars, so a version Ozone cannot run on stops here.\n\
         COPY cds-train /opt/ozone/libexec/cds-train\nRUN /opt/ozone/libexec/cds-train\n",
        group = dep.group,
        prefix = dep.prefix,
        kept = if plan.kept.is_empty() {
            String::new()
        } else {
            format!(" chaos.ozone.swap.kept=\"{}\"", plan.kept.join(" "))
        },
    ));
    std::fs::write(context.join("Dockerfile"), dockerfile).map_err(io)?;
    images::build_image(docker, &tag, &context, "Dockerfile")
        .await
        .map_err(|e| match does_not_run(&e.to_string()) {
            Some((daemon, error)) => HarnessError::infra(format!(
                "Ozone {version} does not run on {} {}: its {daemon} stopped at start with {error} \
                 (Ozone {version} is compiled against {} {}); no image {tag} was made",
                dep.title,
                swap.version,
                dep.title,
                own_version(dep, &jars).unwrap_or("its own version")
            )),
            None => e,
        })?;
    Ok(tag)
}

/// The version of the dependency a jar listing has (its core artifact's jar).
fn own_version<'a>(dep: &Dependency, jars: &'a [String]) -> Option<&'a str> {
    jars.iter()
        .filter_map(|j| split_jar(j))
        .find(|(a, _)| *a == dep.core)
        .map(|(_, v)| v)
}

/// A training daemon that did not start for want of a class or method (images/ozone/cds-train's
/// `<daemon> exited before it listened` or `did not listen`, then the JVM's first exception):
/// the daemon and the Java linkage error.
pub fn does_not_run(build_output: &str) -> Option<(String, String)> {
    const LINKAGE: [&str; 6] = [
        "java.lang.NoSuchMethodError",
        "java.lang.NoSuchFieldError",
        "java.lang.AbstractMethodError",
        "java.lang.IncompatibleClassChangeError",
        "java.lang.NoClassDefFoundError",
        "java.lang.ClassNotFoundException",
    ];
    let daemon = build_output.lines().find_map(|l| {
        let rest = l.split_once("cds-train: ")?.1;
        let (name, _) = rest
            .split_once(" exited before it listened")
            .or_else(|| rest.split_once(" did not listen"))?;
        Some(name.trim().to_string())
    })?;
    let error = build_output.lines().find_map(|l| {
        let at = LINKAGE.iter().filter_map(|k| l.find(k)).min()?;
        Some(l[at..].trim().to_string())
    })?;
    Some((daemon, error))
}

#[cfg(test)]
mod tests;
