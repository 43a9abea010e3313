use super::*;

/// A temporary folder for one test, removed at its end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "chaos-src-test-{name}-{}-{:08x}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const POM: &str = "<project>\n  <parent><artifactId>apache</artifactId><version>35</version></parent>\n  <groupId>org.apache.ozone</groupId>\n  <artifactId>ozone-main</artifactId>\n  <version>2.3.0-SNAPSHOT</version>\n</project>\n";

/// The files that make an Ozone source tree, and one source file.
fn fake_tree(dir: &Path) {
    write(&dir.join("pom.xml"), POM);
    for p in [
        "hadoop-ozone/pom.xml",
        "hadoop-ozone/dist/pom.xml",
        "hadoop-hdds/pom.xml",
    ] {
        write(&dir.join(p), "<project/>\n");
    }
    write(
        &dir.join("hadoop-ozone/common/src/Main.java"),
        "class Main {\n  int x = 1;\n}\n",
    );
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.email=t@example.org", "-c", "user.name=t"])
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(ok.status.success(), "git {args:?}: {ok:?}");
}

fn git_tree(dir: &Path) {
    fake_tree(dir);
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                files.push((e.path(), std::fs::read(e.path()).unwrap_or_default()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn tags_name_version_commit_changes_and_patches() {
    let clean = SourceTree {
        dir: "/x".into(),
        version: "2.3.0-SNAPSHOT".into(),
        state: TreeState::Git {
            commit: "78d5650c313f".into(),
            dirty: None,
        },
    };
    assert_eq!(
        source_tag(&clean, None),
        "chaos-ozone:src-2.3.0-SNAPSHOT-78d5650c313f"
    );
    let dirty = SourceTree {
        state: TreeState::Git {
            commit: "78d5650c313f".into(),
            dirty: Some("0123456789ab".into()),
        },
        ..clean.clone()
    };
    assert_eq!(
        source_tag(&dirty, Some("fb8e20fc2e4c")),
        "chaos-ozone:src-2.3.0-SNAPSHOT-78d5650c313f-d0123456789ab-pfb8e20fc2e4c"
    );
    let files = SourceTree {
        state: TreeState::Files("aaaaaaaaaaaa".into()),
        ..clean
    };
    assert_eq!(
        source_tag(&files, None),
        "chaos-ozone:src-2.3.0-SNAPSHOT-taaaaaaaaaaaa"
    );
    // Docker's rules for a tag: at most 128 characters of [A-Za-z0-9_.-].
    let tag = source_tag(&dirty, Some("fb8e20fc2e4c"));
    let name = tag.split_once(':').unwrap().1;
    assert!(name.len() <= 128);
    assert!(name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)));
}

#[test]
fn patches_digest_their_bytes_in_order() {
    let s = Scratch::new("digest");
    let (a, b) = (s.0.join("a.patch"), s.0.join("b.patch"));
    write(&a, "a");
    write(&b, "b");
    assert_eq!(patches_digest(&[]).unwrap(), None);
    // sha256("ab") = fb8e20fc2e4c3f24...: the same digest as a release's patched tag.
    assert_eq!(
        patches_digest(&[a.clone(), b.clone()]).unwrap().as_deref(),
        Some("fb8e20fc2e4c")
    );
    assert_ne!(
        patches_digest(&[b.clone(), a.clone()]).unwrap(),
        patches_digest(&[a, b]).unwrap()
    );
}

#[test]
fn a_git_tree_is_named_by_commit_and_its_uncommitted_changes() {
    let s = Scratch::new("git");
    git_tree(&s.0);
    let clean = find_source(&s.0).unwrap();
    assert_eq!(clean.version, "2.3.0-SNAPSHOT");
    let TreeState::Git { commit, dirty } = &clean.state else {
        panic!("a git checkout: {:?}", clean.state);
    };
    assert_eq!(commit.len(), 12);
    assert_eq!(dirty, &None);
    // The same tree again: the same tag, so its image is reused.
    assert_eq!(
        source_tag(&find_source(&s.0).unwrap(), None),
        source_tag(&clean, None)
    );
    let main = s.0.join("hadoop-ozone/common/src/Main.java");
    write(&main, "class Main {\n  int x = 2;\n}\n");
    let edited = find_source(&s.0).unwrap();
    let TreeState::Git {
        dirty: Some(d1), ..
    } = &edited.state
    else {
        panic!("dirty: {:?}", edited.state);
    };
    write(&s.0.join("new.txt"), "untracked");
    let TreeState::Git {
        dirty: Some(d2), ..
    } = find_source(&s.0).unwrap().state
    else {
        panic!("dirty");
    };
    assert_ne!(d1, &d2, "an untracked file changes the digest");
    std::fs::remove_file(s.0.join("new.txt")).unwrap();
    write(&main, "class Main {\n  int x = 1;\n}\n");
    assert_eq!(find_source(&s.0).unwrap(), clean);
}

#[test]
fn a_tree_outside_git_is_named_by_its_files_not_its_build_output() {
    let s = Scratch::new("files");
    fake_tree(&s.0);
    let first = find_source(&s.0).unwrap();
    assert!(
        matches!(first.state, TreeState::Files(_)),
        "{:?}",
        first.state
    );
    write(
        &s.0.join("hadoop-ozone/dist/target/ozone-2.3.0-SNAPSHOT/x"),
        "built",
    );
    assert_eq!(find_source(&s.0).unwrap(), first);
    write(&s.0.join("hadoop-ozone/common/src/Main.java"), "changed");
    assert_ne!(find_source(&s.0).unwrap(), first);
}

#[test]
fn a_second_build_of_the_same_tree_is_reused() {
    assert!(needs_build(false, false));
    assert!(!needs_build(true, false));
    assert!(needs_build(true, true));
}

#[test]
fn a_folder_that_is_not_a_source_tree_names_the_missing_file() {
    let s = Scratch::new("bad");
    let message = |dir: &Path| match find_source(dir) {
        Err(HarnessError::BadInput(m)) => m,
        other => panic!("not a source tree: {other:?}"),
    };
    assert!(message(&s.0).ends_with("not an Ozone source tree: missing pom.xml"));
    write(&s.0.join("pom.xml"), POM);
    write(&s.0.join("hadoop-ozone/pom.xml"), "<project/>");
    assert!(message(&s.0).ends_with("missing hadoop-ozone/dist/pom.xml"));
    assert!(message(&s.0.join("nowhere")).contains("no such folder"));
    fake_tree(&s.0);
    write(
        &s.0.join("pom.xml"),
        "<project><artifactId>other</artifactId></project>",
    );
    assert!(message(&s.0).contains("not Ozone's root pom"));
}

#[test]
fn patches_go_to_a_copy_and_never_to_the_tree() {
    let s = Scratch::new("patch");
    let tree = s.0.join("ozone");
    write(&tree.join("hadoop-ozone/common/pom.xml"), "<project/>\n");
    git_tree(&tree);
    write(
        &tree.join("hadoop-ozone/common/target/classes/Main.class"),
        "built",
    );
    let patch = s.0.join("x.patch");
    write(
        &patch,
        "--- a/hadoop-ozone/common/src/Main.java\n+++ b/hadoop-ozone/common/src/Main.java\n@@ -1,3 +1,3 @@\n class Main {\n-  int x = 1;\n+  int x = 3;\n }\n",
    );
    let before = snapshot(&tree);
    let copy = patched_copy(&tree, std::slice::from_ref(&patch)).unwrap();
    assert_eq!(snapshot(&tree), before, "the tree was written to");
    assert_eq!(
        std::fs::read_to_string(copy.0.join("hadoop-ozone/common/src/Main.java")).unwrap(),
        "class Main {\n  int x = 3;\n}\n"
    );
    assert!(!copy.0.join(".git").exists());
    assert!(!copy.0.join("hadoop-ozone/common/target").exists());
    let copied = copy.0.clone();
    drop(copy);
    assert!(!copied.exists(), "the copy outlived its handle");

    // A patch that does not apply: an error naming it, the tree untouched, no copy left.
    let wrong = s.0.join("wrong.patch");
    write(
        &wrong,
        "--- a/hadoop-ozone/common/src/Main.java\n+++ b/hadoop-ozone/common/src/Main.java\n@@ -1,3 +1,3 @@\n class Main {\n-  int x = 7;\n+  int x = 8;\n }\n",
    );
    let leftovers = || {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("chaos-ozone-source-{}-", std::process::id()))
            })
            .count()
    };
    let was = leftovers();
    match patched_copy(&tree, &[wrong]) {
        Err(HarnessError::Infra(m)) => assert!(m.contains("wrong.patch does not apply"), "{m}"),
        other => panic!("a patch that does not apply: {:?}", other.err()),
    }
    assert_eq!(snapshot(&tree), before);
    assert!(leftovers() <= was, "a half-built copy was left behind");
}

/// A distribution as `mvn package -Pdist` lays it out, in `root`.
fn fake_dist(root: &Path, version: &str) {
    for d in ["etc/hadoop", "libexec"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    write(&root.join("share/ozone/lib/dep-1.0.jar"), "dep");
    for c in ozone_build::COMPONENTS {
        write(&root.join(format!("share/ozone/lib/{c}-{version}.jar")), c);
        write(
            &root.join(format!("share/ozone/classpath/{c}.classpath")),
            "classpath=$HDDS_LIB_JARS_DIR/dep-1.0.jar\n",
        );
    }
}

#[test]
fn the_source_build_hands_the_dist_path_the_layout_it_accepts() {
    let s = Scratch::new("layout");
    fake_tree(&s.0);
    let tree = find_source(&s.0).unwrap();
    let built = built_dist(&tree.dir, &tree.version);
    assert_eq!(
        built,
        s.0.join("hadoop-ozone/dist/target/ozone-2.3.0-SNAPSHOT")
    );
    fake_dist(&built, &tree.version);
    let dist = ozone_build::find_dist(&built).unwrap();
    assert_eq!(dist.version, tree.version);
    assert_eq!(dist.root, built);
    // The dist path also accepts the target folder that holds it (what `--dist` is given).
    let parent = ozone_build::find_dist(built.parent().unwrap()).unwrap();
    assert_eq!(parent.root, built);
}

#[test]
fn specs_parse() {
    assert_eq!(parse_spec("/src/ozone"), Ok(("/src/ozone".into(), vec![])));
    assert_eq!(
        parse_spec("../ozone+fixes/a.patch+b.patch"),
        Ok((
            "../ozone".into(),
            vec!["fixes/a.patch".into(), "b.patch".into()]
        ))
    );
    assert!(parse_spec("").is_err());
    assert!(parse_spec("dir+").is_err());
}

#[test]
fn a_failed_maven_build_says_its_module_and_first_error() {
    let lines: Vec<String> = [
        "[INFO] Building Apache Ozone Manager 2.3.0-SNAPSHOT [30/58]",
        "[ERROR] /src/OzoneManager.java:[12,8] cannot find symbol",
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.14.0:compile (default-compile) on project ozone-manager: Compilation failure",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect();
    let (module, first) = maven_failure(&lines);
    assert_eq!(module, "ozone-manager");
    assert_eq!(first, "/src/OzoneManager.java:[12,8] cannot find symbol");
    let nested = vec![
        "[ERROR] [ERROR] Some problems were encountered while processing the POMs:".to_string(),
    ];
    assert_eq!(
        maven_failure(&nested),
        (
            "an unknown module".to_string(),
            "Some problems were encountered while processing the POMs:".to_string()
        )
    );
    let (module, _) = maven_failure(&lines[..2]);
    assert_eq!(module, "Apache Ozone Manager");
    assert_eq!(
        module_news("[INFO] Building Apache Ozone Manager 2.3.0-SNAPSHOT [30/58]").as_deref(),
        Some("module 30/58: Apache Ozone Manager")
    );
    assert_eq!(
        module_news(
            "[INFO] Building Apache Ozone HDDS Client 2.3.0-SNAPSHOT               [23/53]"
        )
        .as_deref(),
        Some("module 23/53: Apache Ozone HDDS Client")
    );
    assert_eq!(module_news("[INFO] Building jar: /x/y.jar"), None);
}

#[test]
fn java_17_and_maven_are_asked_for_by_name() {
    assert_eq!(
        java_major("openjdk version \"17.0.15\" 2025-04-15"),
        Some(17)
    );
    assert_eq!(java_major("java version \"1.8.0_292\""), Some(8));
    assert_eq!(java_major("openjdk version \"21\" 2023-09-19"), Some(21));
    let s = Scratch::new("tools");
    let infra = |path: &Path| match check_tools(path.as_os_str()) {
        Err(HarnessError::Infra(m)) => m,
        other => panic!("tools missing: {other:?}"),
    };
    assert!(infra(&s.0).contains("install a JDK 17"));
    let script = |name: &str, text: &str| {
        let p = s.0.join(name);
        write(&p, text);
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    script(
        "java",
        "#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n",
    );
    assert!(infra(&s.0).contains("there is no mvn: install it"));
    script("mvn", "#!/bin/sh\n");
    let m = infra(&s.0);
    assert!(
        m.contains("needs Java 17 or newer") && m.contains("11.0.2"),
        "{m}"
    );
    script(
        "java",
        "#!/bin/sh\necho 'openjdk version \"17.0.15\" 2025-04-15' >&2\n",
    );
    check_tools(s.0.as_os_str()).unwrap();
}
