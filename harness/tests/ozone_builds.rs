//! Ozone builds of one's own (issue 24), end to end: `chaos images build ozone --patch` compiles
//! a patch against the release's sources from Maven Central and overlays it on the release
//! image, and a cluster from that image runs the patched class (its log line is in the OMs'
//! logs); patches that cannot build fail with one line and leave nothing behind. Docker,
//! Maven Central, javac and the chaos-ozone:2.2.0 image (built when missing) are required;
//! nothing here skips.

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;

use common::repo;

/// One Ozone build or cluster at a time: eight JVMs on two cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn chaos(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_chaos"))
        .current_dir(repo())
        .args(args)
        .output()
        .expect("chaos runs");
    eprintln!(
        "chaos {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn image_exists(tag: &str) -> bool {
    Command::new("docker")
        .args(["image", "inspect", tag])
        .output()
        .expect("the docker client")
        .status
        .success()
}

/// The temporary folders a build makes (chaos-ozone-patch-*, chaos-ozone-dist*), by name.
fn build_folders() -> Vec<String> {
    std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("chaos-ozone-"))
                .collect()
        })
        .unwrap_or_default()
}

fn error_line(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_default()
        .to_string()
}

/// A cluster of the image becomes ready and serves the short Ozone scenario (exit 0).
fn assert_serves(tag: &str, label: &str) {
    let out = common::out_dir(label, "ozone-short");
    let mut command = common::chaos_run("harness/tests/fixtures/ozone-short.yaml", &[], &out);
    command.env("OZONE_IMAGE", tag);
    let output = command.output().expect("chaos runs");
    eprintln!(
        "--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(0), "{tag}: its cluster serves");
}

#[test]
fn a_patched_build_runs_the_patched_class() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = build_folders();
    let built = chaos(&[
        "images",
        "build",
        "ozone",
        "--patch",
        "fixes/tests/log-line.patch",
        "--version",
        "2.2.0",
        // Built again even if an earlier run left the tag: the compile is what is tested.
        "--force",
    ]);
    assert_eq!(built.status.code(), Some(0));
    let tag = String::from_utf8_lossy(&built.stdout).trim().to_string();
    assert!(
        tag.starts_with("chaos-ozone:2.2.0-p") && tag.len() == "chaos-ozone:2.2.0-p".len() + 12,
        "{tag}"
    );
    assert!(image_exists(&tag));
    assert_eq!(
        build_folders(),
        before,
        "the build's temporary folders are gone"
    );

    let (output, run) = {
        let out = common::out_dir("patched", "ozone-short");
        let mut command = common::chaos_run("harness/tests/fixtures/ozone-short.yaml", &[], &out);
        command.env("OZONE_IMAGE", &tag);
        let output = command.output().expect("chaos runs");
        eprintln!(
            "--- stdout\n{}--- stderr\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output, common::run_folder(&out))
    };
    assert_eq!(output.status.code(), Some(0), "the cluster serves");
    for om in ["om1", "om2", "om3"] {
        let log = std::fs::read_to_string(run.join("logs").join(format!("{om}.log"))).unwrap();
        assert!(
            log.contains("CHAOS-PATCHED-BUILD: OzoneManager.start"),
            "{om} runs the patched OzoneManager"
        );
    }
}

/// A patch made from the log-line test patch by replacing `from` with `to`, in a scratch folder.
fn variant(dir: &Path, name: &str, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(repo().join("fixes/tests/log-line.patch")).unwrap();
    assert!(text.contains(from), "{from}");
    let path = dir.join(name);
    std::fs::write(&path, text.replace(from, to)).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn patches_that_cannot_build_say_why_in_one_line_and_leave_nothing() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = repo()
        .join("target/e2e-runs")
        .join(format!("bad-patches-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hunk = variant(
        &dir,
        "hunk.patch",
        "omClientProtocolMetrics.register();",
        "omClientProtocolMetrics.registerNothing();",
    );
    let javac = variant(
        &dir,
        "javac.patch",
        "LOG.info(\"CHAOS-PATCHED-BUILD: OzoneManager.start with chaos test patch log-line.patch\");",
        "LOG.info(noSuchVariable);",
    );
    let outside = variant(
        &dir,
        "outside.patch",
        "hadoop-ozone/ozone-manager/src",
        "hadoop-ozone/integration-test/src",
    );
    let ratis = variant(
        &dir,
        "ratis.patch",
        "hadoop-ozone/ozone-manager/src/main/java/org/apache/hadoop/ozone/om/OzoneManager.java",
        "ratis-server/src/main/java/org/apache/ratis/server/impl/RaftServerImpl.java",
    );
    let missing = dir.join("missing.patch").to_string_lossy().into_owned();
    let before = build_folders();
    let cases: [(&str, &str, i32, &[&str]); 6] = [
        (&missing, "2.2.0", 254, &["missing.patch", "no such file"]),
        (
            "fixes/tests/log-line.patch",
            "2.2",
            254,
            &["not an Ozone version"],
        ),
        (
            &hunk,
            "2.2.0",
            255,
            &["hunk.patch", "OzoneManager.java", "hunk #1"],
        ),
        (
            &javac,
            "2.2.0",
            255,
            &["javac", "cannot find symbol", "noSuchVariable"],
        ),
        (
            &outside,
            "2.2.0",
            255,
            &["integration-test", "outside every module"],
        ),
        (
            &ratis,
            "2.2.0",
            255,
            &["RaftServerImpl.java", "Apache Ratis", "--swap ratis="],
        ),
    ];
    for (patch, version, code, words) in cases {
        let output = chaos(&[
            "images",
            "build",
            "ozone",
            "--patch",
            patch,
            "--version",
            version,
        ]);
        assert_eq!(output.status.code(), Some(code), "{patch}");
        let line = error_line(&output);
        for word in words {
            assert!(line.contains(word), "`{word}` in: {line}");
        }
        assert!(!String::from_utf8_lossy(&output.stdout).contains("chaos-ozone:"));
    }
    assert_eq!(build_folders(), before, "no temporary folder is left");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A distribution folder laid out here from the Central jars in Ozone's dist layout
/// (images/ozone/dist-from-central.sh): `--dist` builds chaos-ozone:dist-<version>-<digest>, a
/// cluster from it becomes ready and serves; a folder that is not a distribution says what it
/// lacks (exit 254).
#[test]
fn a_distribution_folder_builds_an_image_whose_cluster_serves() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = repo()
        .join("target/e2e-runs")
        .join(format!("dist-{}", std::process::id()));
    let laid = Command::new("bash")
        .arg(repo().join("images/ozone/dist-from-central.sh"))
        .arg(&dir)
        .arg("2.2.0")
        .output()
        .unwrap();
    assert!(laid.status.success(), "{laid:?}");
    let before = build_folders();
    let folder = dir.join("ozone-2.2.0");
    let built = chaos(&[
        "images",
        "build",
        "ozone",
        "--dist",
        &folder.to_string_lossy(),
        "--force",
    ]);
    assert_eq!(built.status.code(), Some(0));
    let tag = String::from_utf8_lossy(&built.stdout).trim().to_string();
    assert!(
        tag.starts_with("chaos-ozone:dist-2.2.0-")
            && tag.len() == "chaos-ozone:dist-2.2.0-".len() + 12,
        "{tag}"
    );
    assert!(image_exists(&tag));
    assert_eq!(build_folders(), before, "no temporary folder is left");
    // The class-data sharing archives were trained again on the distribution's own jars: a CLI
    // of the image maps most of its classes from its archive (2.2.0's dist: 1,483 shared, 232
    // from jar files; an image without archives: none shared, 441 from files, 260 from the JDK).
    let loads = Command::new("docker")
        .args(["run", "--rm", "--entrypoint", "bash", &tag, "-c"])
        .arg(
            "OZONE_CLIENT_OPTS=-Xlog:class+load=info ozone getconf -confKey ozone.om.address \
             | grep -o 'source: [a-z]*' | sort | uniq -c",
        )
        .output()
        .unwrap();
    let loads = String::from_utf8_lossy(&loads.stdout).to_string();
    let count = |source: &str| -> u64 {
        loads
            .lines()
            .find(|l| l.trim_end().ends_with(&format!("source: {source}")))
            .and_then(|l| l.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    assert!(
        count("shared") > count("file") + count("jrt"),
        "the CLI's classes come mostly from its archive: {loads}"
    );

    assert_serves(&tag, "dist");

    // Not a distribution: what is missing, in one line.
    std::fs::remove_dir_all(folder.join("libexec")).unwrap();
    std::fs::remove_file(folder.join("share/ozone/classpath/ozone-manager.classpath")).unwrap();
    let refused = chaos(&["images", "build", "ozone", "--dist", &dir.to_string_lossy()]);
    assert_eq!(refused.status.code(), Some(254));
    let line = error_line(&refused);
    assert!(line.contains("not an Ozone distribution"), "{line}");
    assert!(
        line.contains("libexec/") && line.contains("ozone-manager.classpath"),
        "{line}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A release with Apache Ratis swapped for another version from Maven Central (issue 41,
/// affected versions): `--swap ratis=3.2.2` builds chaos-ozone:2.2.0-ratis3.2.2, whose
/// /opt/ozone/lib holds one version of each artifact (ratis-server at 3.2.2; the artifacts
/// Central has no 3.2.2 of stay at 3.2.1, once), and a cluster from it becomes ready and
/// serves. A version Central does not have is refused in one line, no image left.
#[test]
fn a_ratis_swap_builds_an_image_whose_cluster_serves() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let built = chaos(&[
        "images",
        "build",
        "ozone",
        "--swap",
        "ratis=3.2.2",
        "--version",
        "2.2.0",
    ]);
    assert_eq!(built.status.code(), Some(0), "{}", error_line(&built));
    let tag = String::from_utf8_lossy(&built.stdout).trim().to_string();
    assert_eq!(tag, "chaos-ozone:2.2.0-ratis3.2.2");
    let listed = Command::new("docker")
        .args(["run", "--rm", "--entrypoint", "ls", &tag, "/opt/ozone/lib"])
        .output()
        .unwrap();
    let jars = String::from_utf8_lossy(&listed.stdout).to_string();
    let mut versions: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for jar in jars.lines().filter(|j| j.starts_with("ratis-")) {
        let (artifact, version) =
            chaos::cluster::ozone_swap::split_jar(jar).expect("name-version.jar");
        versions.entry(artifact).or_default().push(version);
    }
    assert!(!versions.is_empty(), "{jars}");
    for (artifact, found) in &versions {
        assert_eq!(
            found.len(),
            1,
            "{artifact}: {found:?}: one version per artifact"
        );
    }
    assert_eq!(versions["ratis-server"], ["3.2.2"]);

    assert_serves(&tag, "swap");

    let refused = chaos(&[
        "images",
        "build",
        "ozone",
        "--swap",
        "ratis=9.9.9",
        "--version",
        "2.2.0",
    ]);
    assert!(
        matches!(refused.status.code(), Some(254 | 255)),
        "{refused:?}"
    );
    let line = error_line(&refused);
    assert!(line.contains("9.9.9"), "{line}");
    assert!(!image_exists("chaos-ozone:2.2.0-ratis9.9.9"));
}
