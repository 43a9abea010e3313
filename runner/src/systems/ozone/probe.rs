//! What the OMs show of themselves: Ratis indexes from /prom, roles from the admin CLI, and
//! the named log lines scenarios trigger on (with the indexes some of them carry).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::scenario::Role;

/// One OM's Ratis indexes as its /prom page shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RatisIndexes {
    /// `ratis_state_machine_appliedIndex`: the last log index the OM state machine applied.
    pub applied: Option<u64>,
    /// `ratis_state_machine_applyCompletedIndex`.
    pub apply_completed: Option<u64>,
    /// `ratis_server_peerCommitIndex` for the OM itself (follower label = instance label).
    pub commit: Option<u64>,
    /// `ratis_state_machine_takeSnapshot_count`: snapshots this OM has taken since it started.
    /// /prom has no gauge of the last snapshot index in the sources read; that index is in the
    /// "taking snapshot" log line ([`snapshot_index`]).
    pub snapshots_taken: Option<u64>,
}

/// Parses Prometheus text (format 0.0.4) for one OM's Ratis indexes. `node` is the OM's Ratis
/// peer id (the OM node id, e.g. `om1`); samples of other instances are ignored.
pub fn parse_prom(text: &str, node: &str) -> RatisIndexes {
    let mut out = RatisIndexes::default();
    for (name, labels, number) in samples(text) {
        if !number.is_finite() || number < 0.0 {
            continue;
        }
        let number = number as u64;
        let instance = labels.get("instance").map(String::as_str);
        if instance.is_some_and(|i| i != node) {
            continue;
        }
        match name {
            "ratis_state_machine_appliedIndex" => out.applied = Some(number),
            "ratis_state_machine_applyCompletedIndex" => out.apply_completed = Some(number),
            "ratis_state_machine_takeSnapshot_count" => out.snapshots_taken = Some(number),
            "ratis_server_peerCommitIndex"
                if labels.get("follower").map(String::as_str) == Some(node) =>
            {
                out.commit = Some(number)
            }
            _ => {}
        }
    }
    out
}

/// Every sample of a Prometheus text page (format 0.0.4): name, labels, value.
fn samples(text: &str) -> impl Iterator<Item = (&str, BTreeMap<String, String>, f64)> {
    text.lines().filter_map(|line| {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let (name, labels, value) = match line.find('{') {
            Some(open) => {
                let close = line.rfind('}')?;
                (
                    &line[..open],
                    parse_labels(&line[open + 1..close]),
                    line[close + 1..].trim(),
                )
            }
            None => {
                let mut parts = line.splitn(2, char::is_whitespace);
                (
                    parts.next().unwrap_or_default(),
                    BTreeMap::new(),
                    parts.next().unwrap_or_default().trim(),
                )
            }
        };
        // The value, then an optional timestamp.
        let number = value.split_whitespace().next()?.parse::<f64>().ok()?;
        Some((name, labels, number))
    })
}

/// The largest sample of `spec` on a page: `name`, or `name{label="value",...}` (every label
/// named must match; others may be there too). None when no sample matches.
pub fn metric_value(text: &str, spec: &str) -> Option<f64> {
    let (name, wanted) = match spec.find('{') {
        Some(open) => (
            &spec[..open],
            parse_labels(spec[open + 1..].trim_end_matches('}')),
        ),
        None => (spec, BTreeMap::new()),
    };
    samples(text)
        .filter(|(n, labels, v)| {
            *n == name && v.is_finite() && wanted.iter().all(|(k, w)| labels.get(k) == Some(w))
        })
        .map(|(_, _, v)| v)
        .reduce(f64::max)
}

/// `a="b",c="d",` (a trailing comma is what the Prometheus simpleclient writes).
fn parse_labels(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = text;
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq].trim().trim_start_matches(',').trim().to_string();
        let value_start = eq + 2;
        let mut value = String::new();
        let mut end = None;
        let mut chars = rest[value_start..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        value.push(match n {
                            'n' => '\n',
                            other => other,
                        });
                    }
                }
                '"' => {
                    end = Some(value_start + i + 1);
                    break;
                }
                c => value.push(c),
            }
        }
        out.insert(name, value);
        match end {
            Some(e) => rest = &rest[e..],
            None => break,
        }
    }
    out
}

/// Roles from `ozone admin om roles --json`: `[{"om1": {"serverRole": "LEADER", ...}}, ...]`.
/// LEADER is the leader; FOLLOWER the followers; other Ratis roles (CANDIDATE, LISTENER) and
/// anything unreadable are left out.
pub fn parse_roles(json_text: &str) -> BTreeMap<String, Role> {
    let Some(start) = json_text.find('[') else {
        return BTreeMap::new();
    };
    // The first JSON value; whatever the CLI prints after it (warnings) is ignored.
    let mut values = serde_json::Deserializer::from_str(&json_text[start..])
        .into_iter::<Vec<BTreeMap<String, Value>>>();
    let Some(Ok(list)) = values.next() else {
        return BTreeMap::new();
    };
    list.into_iter()
        .flatten()
        .filter_map(|(node, info)| {
            let role = match info.get("serverRole")?.as_str()? {
                "LEADER" => Role::Leader,
                "FOLLOWER" => Role::Follower,
                _ => return None,
            };
            Some((node, role))
        })
        .collect()
}

/// A log line worth triggering on, with where its text comes from.
#[derive(Debug, Clone, Copy)]
pub struct NamedTrigger {
    pub name: &'static str,
    /// Which nodes print it (om, scm, datanode).
    pub printed_by: &'static str,
    pub regex: &'static str,
    /// The source of the format string and the version it was read in.
    pub source: &'static str,
}

/// The log lines Ozone scenarios trigger on. Each regex is tested on a line in
/// harness/tests/fixtures/ozone; the format strings were read in the Ozone 2.x line (the
/// `master` branch past 2.0, which 2.1.1 was cut from) and Ratis 3.x, which Ozone 2.x uses.
/// Scenarios copy these regexes into `on: { log: { regex } }` (a test checks they match).
pub const TRIGGERS: &[NamedTrigger] = &[
    NamedTrigger {
        name: "leader-change",
        printed_by: "om",
        regex: r"changes role from \w+ to LEADER at term \d+",
        source:
            "Ratis 3.x RaftServerImpl.setRole: \"{}: changes role from {} to {} at term {} for {}\"",
    },
    NamedTrigger {
        name: "install-snapshot-notified",
        printed_by: "om",
        regex: r"Received install snapshot notification from OM leader: \S+ with term index",
        source: "Ozone 2.x OzoneManagerStateMachine.notifyInstallSnapshotFromLeader",
    },
    NamedTrigger {
        name: "install-snapshot-in-progress",
        printed_by: "om",
        regex: r"Snapshot Installation by StateMachine is in progress",
        source: "Ratis 3.x SnapshotInstallationHandler (InstallSnapshotResult.IN_PROGRESS)",
    },
    NamedTrigger {
        name: "install-snapshot-finished",
        printed_by: "om",
        regex: r"Install Checkpoint is finished with Term: \d+ and Index: \d+",
        source: "Ozone 2.x OzoneManager.installCheckpoint",
    },
    NamedTrigger {
        name: "om-state-reloaded",
        printed_by: "om",
        regex: r"Reloaded OM state with Term: \d+ and Index: \d+",
        source: "Ozone 2.x OzoneManager.installCheckpoint, after reloadOMState and unpause",
    },
    NamedTrigger {
        name: "snapshot-taken",
        printed_by: "om",
        regex: r"taking snapshot\. applied = .*current snapshot index = \(t:\d+, i:\d+\)",
        source: "Ozone 2.x OzoneManagerStateMachine.takeSnapshotImpl",
    },
    NamedTrigger {
        name: "log-purged",
        printed_by: "om",
        regex: r"SegmentedRaftLog: purge \d+",
        source: "Ratis 3.x RaftLogBase.purge: \"{}: purge {}\"",
    },
    NamedTrigger {
        name: "container-closed",
        printed_by: "datanode",
        regex: r"ContainerLog \| ID=\d+ \|.*\| State=CLOSED \|",
        source: "Ozone 2.2.0 datanode container log (ContainerLogger, dn-container-log4j2): \
                 recorded live; 2.2.0 prints no \"Container N is closed with bcsId\" line",
    },
    NamedTrigger {
        name: "put-block-failed",
        printed_by: "datanode audit log (a file, tailed into the output by the compose profile)",
        regex: r"op=PUT_BLOCK .*\| ret=FAILURE",
        source: "Ozone 2.x datanode audit (AuditMessage, dn-audit-log4j2.properties)",
    },
];

pub fn trigger(name: &str) -> Option<&'static NamedTrigger> {
    TRIGGERS.iter().find(|t| t.name == name)
}

/// The index of a "taking snapshot" line (`current snapshot index = (t:2, i:1500)`).
pub fn snapshot_index(line: &str) -> Option<u64> {
    let rest = &line[line.find("current snapshot index = (t:")?..];
    let i = rest.find(", i:")? + 4;
    let end = rest[i..].find(')')? + i;
    rest[i..end].trim().parse().ok()
}

/// Term and index of an "Install Checkpoint is finished" line.
pub fn installed_checkpoint(line: &str) -> Option<(u64, u64)> {
    let rest = &line[line.find("Install Checkpoint is finished with Term: ")? + 42..];
    let (term, rest) = rest.split_once(" and Index: ")?;
    let index = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    Some((term.trim().parse().ok()?, index.parse().ok()?))
}

/// What a scenario can assert about the OMs' indexes: the lowest applied index over the OMs that
/// answered, and those whose applied index is more than `bound` behind the highest.
pub fn lagging(indexes: &BTreeMap<String, RatisIndexes>, bound: u64) -> Vec<(String, u64, u64)> {
    let top = indexes
        .values()
        .filter_map(|i| i.applied)
        .max()
        .unwrap_or(0);
    indexes
        .iter()
        .filter_map(|(n, i)| {
            let a = i.applied?;
            (top.saturating_sub(a) > bound).then(|| (n.clone(), a, top))
        })
        .collect()
}

/// The figures of a probe as JSON, for faults.jsonl and result.json.
pub fn indexes_json(indexes: &BTreeMap<String, RatisIndexes>) -> Value {
    json!(indexes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_by_name_and_labels() {
        let page = "# TYPE x gauge\nratis_state_machine_appliedIndex{instance=\"om1\",group=\"g\",} 42.0\nratis_state_machine_appliedIndex{instance=\"om2\",group=\"g\",} 40.0\nom_up 1\n";
        assert_eq!(
            metric_value(page, "ratis_state_machine_appliedIndex"),
            Some(42.0)
        );
        assert_eq!(
            metric_value(page, "ratis_state_machine_appliedIndex{instance=\"om2\"}"),
            Some(40.0)
        );
        assert_eq!(metric_value(page, "om_up"), Some(1.0));
        assert_eq!(metric_value(page, "om_down"), None);
    }

    // Recorded from live Ozone 2.2.0 (harness/tests/fixtures/ozone/README.md).
    const LEADER: &str = include_str!("../../../../harness/tests/fixtures/ozone/om3-leader.prom");
    const FOLLOWER: &str =
        include_str!("../../../../harness/tests/fixtures/ozone/om1-follower.prom");
    const ROLES: &str = include_str!("../../../../harness/tests/fixtures/ozone/roles.json");
    const OM_LIVE_LOG: &str = include_str!("../../../../harness/tests/fixtures/ozone/om-2.2.0.log");
    // Written to the format strings, not yet met live.
    const OM_LOG: &str = include_str!("../../../../harness/tests/fixtures/ozone/om.log");
    const DN_LOG: &str = include_str!("../../../../harness/tests/fixtures/ozone/dn-2.2.0.log");
    const DN_AUDIT: &str = include_str!("../../../../harness/tests/fixtures/ozone/dn-audit.log");

    #[test]
    fn prom_of_the_leader_gives_its_own_indexes() {
        let i = parse_prom(LEADER, "om3");
        assert_eq!(i.applied, Some(623));
        assert_eq!(i.apply_completed, Some(623));
        // Its own commit index, not a follower's (om2 is at 621 in the leader's view).
        assert_eq!(i.commit, Some(623));
        assert_eq!(i.snapshots_taken, Some(0));
    }

    #[test]
    fn prom_of_a_follower() {
        let i = parse_prom(FOLLOWER, "om1");
        assert_eq!((i.applied, i.commit), (Some(616), Some(613)));
        assert_eq!(i.snapshots_taken, Some(0));
        // Samples of another instance say nothing about this one.
        assert_eq!(parse_prom(FOLLOWER, "om3"), RatisIndexes::default());
        let probe = BTreeMap::from([
            ("om3".to_string(), parse_prom(LEADER, "om3")),
            ("om1".to_string(), parse_prom(FOLLOWER, "om1")),
        ]);
        assert_eq!(lagging(&probe, 5), vec![("om1".to_string(), 616, 623)]);
        assert!(lagging(&probe, 10).is_empty());
        assert_eq!(indexes_json(&probe)["om1"]["applied"], 616);
    }

    #[test]
    fn prom_parsing_survives_odd_input() {
        let text = "ratis_state_machine_appliedIndex{instance=\"om2\",note=\"a \\\"b\\\" }\",} 7.0 1700000000\n\
                    ratis_state_machine_appliedIndex NaN\nbroken{ 3\n\n# comment\n";
        assert_eq!(parse_prom(text, "om2").applied, Some(7));
        assert_eq!(parse_prom("", "om1"), RatisIndexes::default());
        // Without labels (a single-OM exporter), the sample counts for any node.
        assert_eq!(
            parse_prom("ratis_state_machine_appliedIndex 12\n", "om1").applied,
            Some(12)
        );
    }

    #[test]
    fn roles_from_the_admin_cli() {
        let roles = parse_roles(ROLES);
        assert_eq!(roles.len(), 3);
        assert_eq!(roles["om3"], Role::Leader);
        assert_eq!(roles["om1"], Role::Follower);
        assert_eq!(roles["om2"], Role::Follower);
        // Log noise before the JSON, a candidate, and garbage.
        let noisy = "WARN something\n[ {\"om1\": {\"serverRole\": \"CANDIDATE\", \"hostname\": \"om1\"}}, {\"om2\": {\"serverRole\": \"LEADER\"}} ]";
        assert_eq!(
            parse_roles(noisy),
            BTreeMap::from([("om2".to_string(), Role::Leader)])
        );
        assert!(parse_roles("om1 : LEADER (om1)").is_empty());
    }

    /// The leader-change trigger matches the lines live OMs printed when they won an election.
    #[test]
    fn leader_change_matches_live_lines() {
        let re = regex::Regex::new(trigger("leader-change").unwrap().regex).unwrap();
        let hits: Vec<&str> = OM_LIVE_LOG.lines().filter(|l| re.is_match(l)).collect();
        assert_eq!(hits.len(), 2, "{OM_LIVE_LOG}");
        assert!(hits[1]
            .contains("om3@group-D66704EFC61C: changes role from CANDIDATE to LEADER at term 2"));
    }

    /// Every named trigger matches its recorded line, and no other recorded line.
    #[test]
    fn triggers_match_their_recorded_lines() {
        let lines: Vec<&str> = OM_LOG
            .lines()
            .chain(DN_LOG.lines())
            .chain(DN_AUDIT.lines())
            .collect();
        let expect = [
            ("leader-change", 1usize, "CANDIDATE to LEADER at term 2"),
            ("install-snapshot-notified", 1, "from OM leader: om1"),
            ("install-snapshot-in-progress", 1, "om3@group"),
            ("install-snapshot-finished", 1, "Index: 1523"),
            ("om-state-reloaded", 1, "Index: 1523. Spend"),
            ("snapshot-taken", 1, "i:1500), took"),
            ("log-purged", 1, "purge 1500"),
            ("container-closed", 1, "ID=1 | Index=0 | BCSID=2"),
            ("put-block-failed", 1, "bcsId: 0"),
        ];
        assert_eq!(expect.len(), TRIGGERS.len());
        for (name, count, witness) in expect {
            let t = trigger(name).unwrap_or_else(|| panic!("no trigger {name}"));
            let re = regex::Regex::new(t.regex).unwrap();
            let hits: Vec<&&str> = lines.iter().filter(|l| re.is_match(l)).collect();
            assert_eq!(hits.len(), count, "{name}: {hits:?}");
            assert!(hits[0].contains(witness), "{name}: {}", hits[0]);
            assert!(!t.source.is_empty());
        }
    }

    #[test]
    fn indexes_from_log_lines() {
        let taken = OM_LOG
            .lines()
            .find(|l| l.contains("taking snapshot"))
            .unwrap();
        assert_eq!(snapshot_index(taken), Some(1500));
        let done = OM_LOG
            .lines()
            .find(|l| l.contains("Install Checkpoint"))
            .unwrap();
        assert_eq!(installed_checkpoint(done), Some((2, 1523)));
        assert_eq!(snapshot_index("nothing"), None);
        assert_eq!(
            installed_checkpoint("Install Checkpoint is finished with Term: x"),
            None
        );
    }
}
