use super::*;

const RATIS: &Dependency = &DEPENDENCIES[0];

/// What chaos-ozone:2.2.0's /opt/ozone/lib holds of Ratis (all of it), plus a few of its other
/// jars: two versions of stax2-api (the release's own), classifier jars.
fn image_2_2_0() -> Vec<String> {
    [
        "commons-cli-1.9.0.jar",
        "netty-tcnative-boringssl-static-2.0.77.Final-linux-x86_64.jar",
        "netty-tcnative-boringssl-static-2.0.77.Final.jar",
        "ozone-manager-2.2.0.jar",
        "ratis-client-3.2.1.jar",
        "ratis-common-3.2.1.jar",
        "ratis-grpc-3.2.1.jar",
        "ratis-metrics-api-3.2.1.jar",
        "ratis-metrics-dropwizard3-3.2.1.jar",
        "ratis-netty-3.2.1.jar",
        "ratis-proto-3.2.1.jar",
        "ratis-server-3.2.1.jar",
        "ratis-server-api-3.2.1.jar",
        "ratis-shell-3.2.1.jar",
        "ratis-thirdparty-misc-1.0.10.jar",
        "slf4j-api-2.0.17.jar",
        "stax2-api-4.2.1.jar",
        "stax2-api-4.2.2.jar",
    ]
    .map(String::from)
    .to_vec()
}

/// swap.sh's OUTDIR/jars for a Ratis version: its whole tree, group-prefixed.
fn resolved(version: &str, thirdparty: &str, artifacts: &[&str]) -> Vec<String> {
    let mut jars: Vec<String> = artifacts
        .iter()
        .map(|a| format!("org.apache.ratis.{a}-{version}.jar"))
        .collect();
    jars.push(format!(
        "org.apache.ratis.ratis-thirdparty-misc-{thirdparty}.jar"
    ));
    jars.extend(
        [
            "commons-cli.commons-cli-1.11.0.jar",
            "org.slf4j.slf4j-api-2.0.18.jar",
            "org.slf4j.slf4j-simple-2.0.18.jar",
        ]
        .map(String::from),
    );
    jars
}

const ALL: [&str; 10] = [
    "ratis-client",
    "ratis-common",
    "ratis-grpc",
    "ratis-metrics-api",
    "ratis-metrics-dropwizard3",
    "ratis-netty",
    "ratis-proto",
    "ratis-server",
    "ratis-server-api",
    "ratis-shell",
];

/// The Ratis jars of a listing, by artifact: their versions.
fn ratis_versions(jars: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for jar in jars.iter().filter(|j| j.starts_with("ratis-")) {
        let (a, v) = split_jar(jar).unwrap();
        map.entry(a.to_string()).or_default().push(v.to_string());
    }
    map
}

#[test]
fn jar_names_split_as_build_sh_splits_them() {
    assert_eq!(
        split_jar("ratis-server-3.2.1.jar"),
        Some(("ratis-server", "3.2.1"))
    );
    assert_eq!(
        split_jar("ratis-metrics-dropwizard3-3.2.1.jar"),
        Some(("ratis-metrics-dropwizard3", "3.2.1"))
    );
    assert_eq!(
        split_jar("ratis-thirdparty-misc-1.0.10.jar"),
        Some(("ratis-thirdparty-misc", "1.0.10"))
    );
    assert_eq!(
        split_jar("netty-tcnative-boringssl-static-2.0.77.Final-linux-x86_64.jar"),
        Some((
            "netty-tcnative-boringssl-static",
            "2.0.77.Final-linux-x86_64"
        ))
    );
    assert_eq!(
        split_jar("listenablefuture-9999.0-empty-to-avoid-conflict-with-guava.jar"),
        Some((
            "listenablefuture",
            "9999.0-empty-to-avoid-conflict-with-guava"
        ))
    );
    assert_eq!(
        split_jar("foo-1.0-bar.baz-2.0.jar"),
        Some(("foo-1.0-bar.baz", "2.0"))
    );
    assert_eq!(split_jar("no-version.jar"), None);
    assert_eq!(split_jar("ratis-server-3.2.1.pom"), None);
}

#[test]
fn swaps_parse_and_name_their_image() {
    assert_eq!(
        Swap::parse("ratis=3.3.0"),
        Ok(Swap {
            name: "ratis".into(),
            version: "3.3.0".into()
        })
    );
    let unknown = Swap::parse("hadoop=3.4.1").unwrap_err();
    assert!(
        unknown.contains("`hadoop` cannot be swapped; only `ratis=VERSION`"),
        "{unknown}"
    );
    assert!(Swap::parse("ratis=latest")
        .unwrap_err()
        .contains("is not a ratis version"));
    assert!(Swap::parse("ratis=").is_err());
    assert!(is_swap("ratis=3.3.0"));
    assert!(is_swap("hadoop=3.4.1"));
    assert!(!is_swap("fixes/a=b.patch"));
    assert!(!is_swap("fixes/X.patch"));
    assert!(!is_swap("=3.3.0"));
    let swap = Swap::parse("ratis=3.3.0").unwrap();
    assert_eq!(swap.to_string(), "ratis=3.3.0");
    assert_eq!(
        swapped_tag("2.2.0", &swap, &[]).unwrap(),
        "chaos-ozone:2.2.0-ratis3.3.0"
    );
    let dir = std::env::temp_dir().join(format!("chaos-swap-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.patch"), dir.join("b.patch"));
    std::fs::write(&a, "a").unwrap();
    std::fs::write(&b, "b").unwrap();
    // The patched build's digest: sha256("ab") = fb8e20fc2e4c...
    assert_eq!(
        swapped_tag("2.2.0", &swap, &[a, b]).unwrap(),
        "chaos-ozone:2.2.0-ratis3.3.0-pfb8e20fc2e4c"
    );
    assert!(check_swap_args("2.2.0", &swap, &[dir.join("none.patch")]).is_err());
    assert!(check_swap_args("2.2", &swap, &[]).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn maven_is_asked_for_the_artifacts_at_ratis_own_version() {
    let wanted = requested(RATIS, &image_2_2_0()).unwrap();
    assert_eq!(wanted[0], "ratis-server");
    assert_eq!(wanted.len(), 10);
    assert!(!wanted.iter().any(|w| w == "ratis-thirdparty-misc"));
    let none = requested(RATIS, &["ozone-manager-2.2.0.jar".to_string()]).unwrap_err();
    assert!(none.contains("no ratis-server"), "{none}");
}

#[test]
fn a_swap_leaves_one_version_of_each_ratis_artifact() {
    let image = image_2_2_0();
    // 3.3.0: every artifact there, and a newer thirdparty (1.1.0) in its tree.
    let plan = plan_swap(
        RATIS,
        "3.3.0",
        &image,
        &resolved("3.3.0", "1.1.0", &ALL),
        &[],
    )
    .unwrap();
    assert_eq!(plan.replace.len(), 11);
    assert!(plan.added.is_empty());
    let after = plan.apply(&image);
    check_one_version(RATIS, &image, &after).unwrap();
    let ratis = ratis_versions(&after);
    assert_eq!(ratis.len(), 11);
    for (artifact, v) in &ratis {
        let want = if artifact == "ratis-thirdparty-misc" {
            "1.1.0"
        } else {
            "3.3.0"
        };
        assert_eq!(v, &vec![want.to_string()], "{artifact}");
    }
    // Other groups of the tree are not swapped: the image's stay, none is added.
    assert!(after.contains(&"slf4j-api-2.0.17.jar".to_string()));
    assert!(after.contains(&"commons-cli-1.9.0.jar".to_string()));
    assert!(!after
        .iter()
        .any(|j| j.contains("slf4j-simple") || j.contains("2.0.18")));
    assert!(after.contains(&"stax2-api-4.2.1.jar".to_string()));
    assert_eq!(after.len(), image.len());
    assert!(
        plan.notes[0].starts_with("Apache Ratis 3.2.1 -> 3.3.0: 10 org.apache.ratis jar(s)"),
        "{:?}",
        plan.notes
    );
    assert!(plan
        .notes
        .iter()
        .any(|n| n.contains("ratis-thirdparty-misc 1.0.10 -> 1.1.0")));
    assert!(plan.notes.iter().any(|n| n.contains("slf4j-simple")));

    // 3.2.2: Central lacks three of its artifacts; they stay at 3.2.1, each once.
    let present: Vec<&str> = ALL
        .iter()
        .copied()
        .filter(|a| !["ratis-shell", "ratis-netty", "ratis-metrics-dropwizard3"].contains(a))
        .collect();
    let absent = ["ratis-metrics-dropwizard3", "ratis-netty", "ratis-shell"].map(String::from);
    let plan = plan_swap(
        RATIS,
        "3.2.2",
        &image,
        &resolved("3.2.2", "1.0.11", &present),
        &absent,
    )
    .unwrap();
    let after = plan.apply(&image);
    check_one_version(RATIS, &image, &after).unwrap();
    let ratis = ratis_versions(&after);
    assert_eq!(ratis["ratis-server"], vec!["3.2.2"]);
    assert_eq!(ratis["ratis-shell"], vec!["3.2.1"]);
    assert_eq!(ratis["ratis-netty"], vec!["3.2.1"]);
    assert_eq!(ratis["ratis-thirdparty-misc"], vec!["1.0.11"]);
    assert_eq!(
        plan.kept,
        vec![
            "ratis-metrics-dropwizard3-3.2.1.jar",
            "ratis-netty-3.2.1.jar",
            "ratis-shell-3.2.1.jar"
        ]
    );
    assert!(
        plan.notes.iter().any(|n| n.contains(
            "Maven Central has no ratis-metrics-dropwizard3, ratis-netty, ratis-shell of Apache Ratis 3.2.2"
        )),
        "{:?}",
        plan.notes
    );

    // An older thirdparty in the tree: the image's newer one stays.
    let plan = plan_swap(
        RATIS,
        "3.1.3",
        &image,
        &resolved("3.1.3", "1.0.6", &ALL),
        &[],
    )
    .unwrap();
    let after = plan.apply(&image);
    assert_eq!(
        ratis_versions(&after)["ratis-thirdparty-misc"],
        vec!["1.0.10"]
    );
    assert!(plan
        .notes
        .iter()
        .any(|n| n.contains("ratis-thirdparty-misc stays at 1.0.10")));

    // An artifact the image lacks comes in; one the version should have and Maven did not
    // resolve is an error, not a silent mix.
    let mut more = resolved("3.3.0", "1.1.0", &ALL);
    more.push("org.apache.ratis.ratis-metrics-default-3.3.0.jar".into());
    let plan = plan_swap(RATIS, "3.3.0", &image, &more, &[]).unwrap();
    assert_eq!(plan.added, vec!["ratis-metrics-default-3.3.0.jar"]);
    let lacking: Vec<&str> = ALL.iter().copied().filter(|a| *a != "ratis-grpc").collect();
    let error = plan_swap(
        RATIS,
        "3.3.0",
        &image,
        &resolved("3.3.0", "1.1.0", &lacking),
        &[],
    )
    .unwrap_err();
    assert!(
        error.contains("org.apache.ratis:ratis-grpc:3.3.0"),
        "{error}"
    );
}

#[test]
fn the_duplicate_check_refuses_two_versions_of_one_artifact() {
    let before = image_2_2_0();
    // The release's own pair (stax2-api) and classifier jars are not the swap's doing.
    check_one_version(RATIS, &before, &before).unwrap();
    let mut after = before.clone();
    after.push("ratis-common-3.3.0.jar".into());
    let error = check_one_version(RATIS, &before, &after).unwrap_err();
    assert_eq!(
        error,
        "the swap would leave /opt/ozone/lib with two versions of ratis-common (3.2.1, 3.3.0): refused"
    );
    let mut after = before.clone();
    after.push("slf4j-api-2.0.18.jar".into());
    let error = check_one_version(RATIS, &before, &after).unwrap_err();
    assert!(error.contains("slf4j-api (2.0.17, 2.0.18)"), "{error}");
    // A Ratis artifact twice is refused even when the image already had it twice.
    let mut twice = before.clone();
    twice.push("ratis-shell-3.2.0.jar".into());
    assert!(check_one_version(RATIS, &twice, &twice).is_err());
}

#[test]
fn classpaths_name_the_new_jars() {
    let image = image_2_2_0();
    let mut more = resolved("3.3.0", "1.1.0", &ALL);
    more.push("org.apache.ratis.ratis-metrics-default-3.3.0.jar".into());
    let plan = plan_swap(RATIS, "3.3.0", &image, &more, &[]).unwrap();
    let before = "/opt/ozone/lib/commons-cli-1.9.0.jar\n\
                  /opt/ozone/lib/ratis-client-3.2.1.jar\n\
                  /opt/ozone/lib/ratis-thirdparty-misc-1.0.10.jar\n\
                  /opt/ozone/lib/slf4j-api-2.0.17.jar\n\
                  /opt/ozone/lib/ratis-common-3.2.1.jar\n\
                  /opt/ozone/lib/ozone-manager-2.2.0.jar\n";
    assert_eq!(
        plan.rewrite_classpath(RATIS, before),
        "/opt/ozone/lib/commons-cli-1.9.0.jar\n\
         /opt/ozone/lib/ratis-client-3.3.0.jar\n\
         /opt/ozone/lib/ratis-thirdparty-misc-1.1.0.jar\n\
         /opt/ozone/lib/slf4j-api-2.0.17.jar\n\
         /opt/ozone/lib/ratis-common-3.3.0.jar\n\
         /opt/ozone/lib/ratis-metrics-default-3.3.0.jar\n\
         /opt/ozone/lib/ozone-manager-2.2.0.jar\n"
    );
    // A classpath without Ratis gets none.
    let plain = "/opt/ozone/lib/commons-cli-1.9.0.jar\n";
    assert_eq!(plan.rewrite_classpath(RATIS, plain), plain);
    // Every jar a rewritten classpath names is in the folder after the swap.
    let after = plan.apply(&image);
    for line in plan.rewrite_classpath(RATIS, before).lines() {
        let name = line.trim_start_matches("/opt/ozone/lib/");
        assert!(after.iter().any(|j| j == name), "{name}");
    }
}

#[test]
fn a_daemon_stopped_by_a_missing_method_is_named_with_its_error() {
    // What the build of 2.2.0+ratis=3.3.0 printed (Ratis 3.3.0's Preconditions.assertSame
    // returns T; Ozone 2.2.0 calls the void one of 3.2.1).
    let output = "building chaos-ozone:2.2.0-ratis3.3.0 failed: The command '/bin/sh -c /opt/ozone/libexec/cds-train' returned a non-zero code: 1\n\
                  Step 9/10 : RUN /opt/ozone/libexec/cds-train\n\
                  cds-train: scm exited before it listened on 9860:\n\
                  Exception in thread \"main\" java.lang.NoSuchMethodError: 'void org.apache.ratis.util.Preconditions.assertSame(java.lang.Object, java.lang.Object, java.lang.String)'\n\
                  \tat org.apache.hadoop.hdds.utils.db.CodecBuffer.putFromSource(CodecBuffer.java:505)\n";
    assert_eq!(
        does_not_run(output),
        Some((
            "scm".to_string(),
            "java.lang.NoSuchMethodError: 'void org.apache.ratis.util.Preconditions.assertSame(java.lang.Object, java.lang.Object, java.lang.String)'".to_string()
        ))
    );
    assert_eq!(
        does_not_run("cds-train: om did not listen on 9862 in 120 s\nno exception"),
        None
    );
    assert_eq!(does_not_run("java.lang.NoClassDefFoundError: x"), None);
}
