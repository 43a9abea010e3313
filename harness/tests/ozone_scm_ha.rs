//! Ozone with three SCMs (issue 7, "one SCM, or three with --scm-ha"): the compose profile
//! `ozone-scm-ha` as the harness reads it, and `chaos lint` / `chaos run` with `--scm-ha`.
//! No Docker needed: nothing here starts or asks the engine.

use std::collections::{BTreeMap, BTreeSet};
mod common;

use common::chaos;
use std::path::{Path, PathBuf};

use chaos::cluster::compose::{ComposeFile, Service};

const PROFILE: &str = "ozone";
const SCM_HA: &str = "ozone-scm-ha";
const SITE: &str = "OZONE-SITE.XML_";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn compose() -> ComposeFile {
    ComposeFile::load(&repo().join("docker-compose.yml")).unwrap()
}

/// A node's environment as its container gets it (the file's order; a later key wins).
fn env(service: &Service) -> BTreeMap<String, String> {
    service.environment.0.iter().cloned().collect()
}

fn site<'a>(env: &'a BTreeMap<String, String>, key: &str) -> Option<&'a str> {
    env.get(&format!("{SITE}{key}")).map(String::as_str)
}

fn list(value: &str) -> Vec<String> {
    value.split(',').map(|s| s.trim().to_string()).collect()
}

fn is_scm(service: &Service) -> bool {
    service.command.as_deref() == Some(&["ozone".to_string(), "scm".to_string()][..])
}

/// The SCM-HA profile is the `ozone` cluster with two more SCMs: the same node names, so every
/// Ozone scenario plays on it unchanged.
#[test]
fn the_scm_ha_profile_has_the_ozone_nodes_and_two_more_scms() {
    let file = compose();
    let one: Vec<String> = file.profile_nodes(PROFILE);
    let three: Vec<String> = file.profile_nodes(SCM_HA);
    assert_eq!(
        one,
        ["scm", "om1", "om2", "om3", "dn1", "dn2", "dn3", "s3g"],
        "profile {PROFILE}"
    );
    let mut expected: Vec<String> = one.clone();
    expected.extend(["scm2".to_string(), "scm3".to_string()]);
    expected.sort();
    let mut got = three.clone();
    got.sort();
    assert_eq!(got, expected, "profile {SCM_HA}");

    // Node for node, the same program, image, ports, chaosfs directories and readiness probe.
    let single = compose().into_profile(PROFILE);
    let ha = file.into_profile(SCM_HA);
    for node in &one {
        let a = single.service(node).unwrap();
        let b = ha.service(node).unwrap();
        assert_eq!(a.image, b.image, "{node}: image");
        assert_eq!(a.command, b.command, "{node}: command");
        assert_eq!(a.ports, b.ports, "{node}: ports");
        assert_eq!(a.x_chaos.fs, b.x_chaos.fs, "{node}: x-chaos.fs");
        // The same probe; an OM's dials the OM's own address, which is its service's name.
        let own_address = |test: Vec<String>| -> Vec<String> {
            test.into_iter()
                .map(|w| w.replace(&format!("scmha-{node}/"), &format!("{node}/")))
                .collect()
        };
        assert_eq!(
            a.healthcheck.as_ref().map(|h| h.test.clone()),
            b.healthcheck.as_ref().map(|h| own_address(h.test.clone())),
            "{node}: healthcheck"
        );
        // Every ozone-site key of the one-SCM node is there too, with the same value, except
        // the one-SCM addresses, the OM addresses (which name the SCM-HA services) and the
        // single SCM's own Ratis timings: with one SCM they only delay its start, with three
        // they are what an SCM failover waits on, so SCM HA keeps Ozone's defaults.
        let (ea, eb) = (env(a), env(b));
        for (key, value) in &ea {
            let Some(name) = key.strip_prefix(SITE) else {
                continue;
            };
            if ["ozone.scm.names", "ozone.scm.client.address"].contains(&name)
                || name == "ozone.scm.block.client.address"
                || name.starts_with("ozone.om.address.")
                || name.starts_with("ozone.scm.ha.ratis.leader.")
            {
                continue;
            }
            assert_eq!(eb.get(key), Some(value), "{node}: {key}");
        }
        assert!(
            !eb.keys().any(|k| k.contains("ozone.scm.ha.ratis.leader.")),
            "{node}: SCM HA keeps Ozone's own SCM Ratis timings"
        );
        assert_eq!(
            ea.get("CORE-SITE.XML_fs.defaultFS"),
            eb.get("CORE-SITE.XML_fs.defaultFS"),
            "{node}"
        );
    }
}

/// Every node that talks to SCM (all of them: SCMs, OMs, datanodes, the gateway's client) names
/// the same three SCMs of one SCM service, each by the name its container is reached by; none
/// keeps a one-SCM address; exactly one SCM is primordial and initialises, the other two
/// bootstrap, each after an SCM already up.
#[test]
fn every_node_names_all_three_scms_and_one_is_primordial() {
    let ha = compose().into_profile(SCM_HA);
    let nodes: Vec<String> = ha.services.keys().cloned().collect();
    // Node -> the name other containers reach it by (the compose service's key).
    let dns: BTreeMap<&str, &str> = ha
        .services
        .iter()
        .map(|(node, s)| (node.as_str(), s.dns_name(node)))
        .collect();
    let scm_nodes: BTreeSet<&str> = ha
        .services
        .iter()
        .filter(|(_, s)| is_scm(s))
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(
        scm_nodes,
        BTreeSet::from(["scm", "scm2", "scm3"]),
        "the SCM nodes"
    );

    let mut primordial = BTreeSet::new();
    for node in &nodes {
        let service = ha.service(node).unwrap();
        let env = env(service);
        let sid = site(&env, "ozone.scm.service.ids")
            .unwrap_or_else(|| panic!("{node}: no ozone.scm.service.ids"));
        assert_eq!(sid, "scmservice", "{node}");
        let ids = list(
            site(&env, &format!("ozone.scm.nodes.{sid}"))
                .unwrap_or_else(|| panic!("{node}: no ozone.scm.nodes.{sid}")),
        );
        assert_eq!(ids, ["scm", "scm2", "scm3"], "{node}: SCM node ids");
        for id in &ids {
            let address = site(&env, &format!("ozone.scm.address.{sid}.{id}"))
                .unwrap_or_else(|| panic!("{node}: no address for SCM {id}"));
            // The SCM node id is the node's name; its address is how that container is reached.
            assert_eq!(Some(&address), dns.get(id.as_str()), "{node}: SCM {id}");
        }
        for one_scm in [
            "ozone.scm.names",
            "ozone.scm.client.address",
            "ozone.scm.block.client.address",
        ] {
            assert_eq!(
                site(&env, one_scm),
                None,
                "{node}: {one_scm} is for one SCM"
            );
        }
        assert_eq!(site(&env, "ozone.scm.ratis.enable"), Some("true"), "{node}");
        primordial.insert(
            site(&env, "ozone.scm.primordial.node.id")
                .unwrap_or_else(|| panic!("{node}: no ozone.scm.primordial.node.id"))
                .to_string(),
        );
        // The OMs are named the same way: node id = node name, address = its container's name.
        let oms = list(site(&env, "ozone.om.nodes.omservice").unwrap());
        assert_eq!(oms, ["om1", "om2", "om3"], "{node}");
        for om in &oms {
            assert_eq!(
                site(&env, &format!("ozone.om.address.omservice.{om}")),
                dns.get(om.as_str()).copied(),
                "{node}: OM {om}"
            );
        }
        // Whatever a node waits for or starts after is a node of this profile.
        if let Some(wait) = env.get("WAITFOR") {
            let host = wait.split(':').next().unwrap();
            assert!(dns.values().any(|d| *d == host), "{node}: WAITFOR {wait}");
        }
        for dep in &service.depends_on.0 {
            assert!(nodes.contains(dep), "{node}: depends_on {dep}");
        }
    }
    assert_eq!(
        primordial.len(),
        1,
        "one primordial SCM for all: {primordial:?}"
    );
    let primordial = primordial.into_iter().next().unwrap();
    assert!(scm_nodes.contains(primordial.as_str()), "{primordial}");

    let mut initialised = Vec::new();
    let mut bootstrapped = Vec::new();
    for scm in &scm_nodes {
        let service = ha.service(scm).unwrap();
        let env = env(service);
        let init = env.contains_key("ENSURE_SCM_INITIALIZED");
        let boot = env.contains_key("ENSURE_SCM_BOOTSTRAPPED");
        assert!(
            init != boot,
            "{scm}: initialises or bootstraps, exactly one"
        );
        if init {
            initialised.push(*scm);
        } else {
            bootstrapped.push(*scm);
            // It waits for another SCM's Ratis port and starts after it.
            let wait = env
                .get("WAITFOR")
                .unwrap_or_else(|| panic!("{scm}: no WAITFOR"));
            let (host, port) = wait.split_once(':').unwrap();
            assert_eq!(port, "9894", "{scm}: WAITFOR {wait}");
            let after = dns.iter().find(|(_, d)| **d == host).unwrap().0;
            assert!(scm_nodes.contains(after) && after != scm, "{scm}: {wait}");
            assert!(
                service.depends_on.0.iter().any(|d| d == after),
                "{scm}: depends_on {after}"
            );
        }
    }
    assert_eq!(
        initialised,
        [primordial.as_str()],
        "the primordial SCM initialises"
    );
    assert_eq!(bootstrapped, ["scm2", "scm3"], "the others bootstrap");

    // The OMs and datanodes start after every SCM.
    for node in ["om1", "om2", "om3", "dn1", "dn2", "dn3"] {
        let deps = &ha.service(node).unwrap().depends_on.0;
        for scm in &scm_nodes {
            assert!(deps.iter().any(|d| d == scm), "{node}: depends_on {scm}");
        }
    }
}

/// The one-SCM profile is unchanged: one SCM that initialises, named by ozone.scm.names.
#[test]
fn the_ozone_profile_keeps_one_scm() {
    let single = compose().into_profile(PROFILE);
    for (node, service) in &single.services {
        let env = env(service);
        assert_eq!(site(&env, "ozone.scm.names"), Some("scm"), "{node}");
        assert_eq!(site(&env, "ozone.scm.service.ids"), None, "{node}");
        assert_eq!(service.dns_name(node), node.as_str());
    }
    let scm = env(single.service("scm").unwrap());
    assert!(scm.contains_key("ENSURE_SCM_INITIALIZED"));
}

/// `chaos lint --scm-ha` accepts every shipped Ozone scenario; the loader plays it on profile
/// ozone-scm-ha with the same node names plus scm2 and scm3.
#[test]
fn every_ozone_scenario_lints_with_scm_ha() {
    let mut paths: Vec<String> = std::fs::read_dir(repo().join("scenarios/ozone"))
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .collect();
    paths.sort();
    assert!(paths.len() >= 6, "{paths:?}");
    let mut args = vec!["lint", "--scm-ha"];
    args.extend(paths.iter().map(String::as_str));
    let (code, out, _) = chaos(&args);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches(": ok").count(), paths.len(), "{out}");

    let path = repo().join("scenarios/ozone/retry-after-restart.yaml");
    let loaded = chaos::load::load_with(&path, chaos::load::LoadOptions { scm_ha: true }).unwrap();
    assert_eq!(loaded.profile, SCM_HA);
    assert!(loaded.scm_ha);
    for node in [
        "scm", "scm2", "scm3", "om1", "om2", "om3", "dn1", "dn2", "dn3", "s3g",
    ] {
        assert!(
            loaded.nodes.iter().any(|n| n == node),
            "{node}: {:?}",
            loaded.nodes
        );
    }
    assert_eq!(loaded.nodes.len(), 10);
    assert_eq!(
        loaded.compose.service("om1").unwrap().dns_name("om1"),
        "scmha-om1"
    );
    let plain = chaos::load::load(&path).unwrap();
    assert_eq!(plain.profile, PROFILE);
    assert!(!plain.scm_ha);
    assert_eq!(plain.nodes.len(), 8);
}

/// A scenario may ask for three SCMs itself by naming the profile; scm2 and scm3 are nodes
/// there (and with --scm-ha), not in profile ozone.
#[test]
fn a_scenario_names_the_scm_ha_profile_or_the_flag_brings_it() {
    let dir = repo().join("target/tmp/ozone-scm-ha-lint");
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = |profile: &str| {
        format!(
            "name: t\nsystem: ozone\ncluster: {{ profile: {profile} }}\nworkload: {{ kind: create, rate: 1/s, duration: 1s }}\nfaults:\n  - at: 1s\n    do: kill\n    target: scm2\n    then: {{ do: start, after: 1s }}\n"
        )
    };
    let named = dir.join("names-the-profile.yaml");
    std::fs::write(&named, scenario(SCM_HA)).unwrap();
    let plain = dir.join("plain.yaml");
    std::fs::write(&plain, scenario(PROFILE)).unwrap();
    let (code, out, _) = chaos(&["lint", named.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    // --scm-ha on a scenario that already names the SCM-HA profile changes nothing.
    let (code, out, _) = chaos(&["lint", "--scm-ha", named.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let (code, _, out) = chaos(&["lint", plain.to_str().unwrap()]);
    assert_eq!(code, 254, "{out}");
    assert!(
        out.contains("faults[0].target: unknown node `scm2`"),
        "{out}"
    );
    let (code, out, _) = chaos(&["lint", "--scm-ha", plain.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
}

/// --scm-ha on a scenario of another system is an error before anything starts (exit 254), in
/// `chaos lint` and `chaos run` alike, naming the scenario's system.
#[test]
fn scm_ha_on_another_system_is_an_error() {
    let etcd = repo().join("scenarios/etcd/register-faults.yaml");
    let path = etcd.to_str().unwrap();
    let expected = "system: --scm-ha plays an Ozone scenario on three SCMs";
    let (code, _, out) = chaos(&["lint", "--scm-ha", path]);
    assert_eq!(code, 254, "{out}");
    assert!(
        out.contains(expected) && out.contains("system `etcd`"),
        "{out}"
    );
    let (code, out, err) = chaos(&["run", "--scm-ha", path, "--out", "target/tmp/scm-ha-runs"]);
    assert_eq!(code, 254, "{out}\n{err}");
    assert!(err.contains(expected), "{err}");
}
