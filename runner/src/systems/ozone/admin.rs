//! Command lines of Ozone's admin CLI and the scenario actions they carry out.
//!
//! Command lines for Ozone's admin CLI, run in an OM container
//! ([`Ozone::admin`](super::Ozone)). Sources: `hadoop-ozone/cli-admin/.../admin/om/`
//! (`GetServiceRolesSubcommand`, `TransferOmLeaderSubCommand` with `-n/--newLeaderId` or
//! `-r/--random`, `PrepareSubCommand`, `CancelPrepareSubCommand`),
//! `.../admin/scm/container/CloseSubcommand`, and the Ratis shell that Ozone embeds as `ozone
//! ratis` (`snapshot create -peers ... -peerId ...`).

use super::{is_om, OM_RATIS_PORT, SERVICE_ID};
use crate::scenario::{Action, ContainerRef};

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| w.to_string()).collect()
}

pub fn roles() -> Vec<String> {
    words(&[
        "ozone",
        "admin",
        "om",
        "roles",
        "--service-id",
        SERVICE_ID,
        "--json",
    ])
}

/// Makes `om` the OM leader.
pub fn transfer_leader(om: &str) -> Vec<String> {
    words(&[
        "ozone",
        "admin",
        "om",
        "transfer",
        "--service-id",
        SERVICE_ID,
        "-n",
        om,
    ])
}

/// Makes `om` the OM leader through Ratis's own admin request (ratis-shell's `election
/// transfer`), which no OM answers as a request of its own: it raises `om`'s priority only when
/// another OM's is higher, and leaves the priorities as they are afterwards.
pub fn ratis_transfer_leader(oms: &[&str], om: &str) -> Vec<String> {
    let mut w = words(&["ozone", "ratis", "election", "transfer", "-peers"]);
    w.push(ratis_peers(oms));
    w.push("-address".into());
    w.push(format!("{om}:{OM_RATIS_PORT}"));
    w
}

fn ratis_peers(oms: &[&str]) -> String {
    let peers: Vec<String> = oms.iter().map(|o| format!("{o}:{OM_RATIS_PORT}")).collect();
    peers.join(",")
}

/// Makes a follower picked by the OM the leader.
pub fn transfer_leader_random() -> Vec<String> {
    words(&[
        "ozone",
        "admin",
        "om",
        "transfer",
        "--service-id",
        SERVICE_ID,
        "-r",
    ])
}

/// Asks `om` to take a Ratis snapshot now (then purge up to it, with small purge gaps).
pub fn take_snapshot(oms: &[&str], om: &str) -> Vec<String> {
    let mut w = words(&["ozone", "ratis", "snapshot", "create", "-peers"]);
    w.push(ratis_peers(oms));
    w.extend(words(&["-peerId", om]));
    w
}

/// "SCM is out of safe mode." once it is (run where `ozone.scm.client.address` points).
pub fn safemode_status() -> Vec<String> {
    words(&["ozone", "admin", "safemode", "status"])
}

/// One `Pipeline{ ... ReplicationConfig: RATIS/THREE, State:OPEN, ...}` line per pipeline.
pub fn pipelines() -> Vec<String> {
    words(&["ozone", "admin", "pipeline", "list"])
}

pub fn close_container(id: u64) -> Vec<String> {
    let mut w = words(&["ozone", "admin", "container", "close"]);
    w.push(id.to_string());
    w
}

/// Closes every OPEN container: the ids from `ozone admin container list --state=OPEN`
/// (JSON, a `"containerID" : n` field per container), one close each.
pub fn close_open_containers() -> Vec<String> {
    words(&[
        "bash",
        "-c",
        "set -o pipefail; ozone admin container list --state=OPEN --count=10000 \
         | grep -o '\"containerID\" *: *[0-9]*' | grep -o '[0-9]*$' \
         | xargs -r -n1 ozone admin container close",
    ])
}

pub fn prepare() -> Vec<String> {
    words(&[
        "ozone",
        "admin",
        "om",
        "prepare",
        "--service-id",
        SERVICE_ID,
    ])
}

pub fn cancel_prepare() -> Vec<String> {
    words(&[
        "ozone",
        "admin",
        "om",
        "cancelprepare",
        "--service-id",
        SERVICE_ID,
    ])
}

/// The scenario actions this adapter carries out with [`admin`](self) command lines.
pub const ADMIN_ACTIONS: &[&str] = &[
    "transfer-leader",
    "take-snapshot",
    "close-container",
    "prepare",
];

/// The command lines of an admin action on its resolved targets.
pub fn admin_commands(
    action: Action,
    targets: &[String],
    container: Option<ContainerRef>,
    oms: &[&str],
) -> Result<Vec<Vec<String>>, String> {
    let om_targets = || -> Result<Vec<&String>, String> {
        let bad: Vec<&String> = targets.iter().filter(|t| !is_om(t)).collect();
        if bad.is_empty() && !targets.is_empty() {
            Ok(targets.iter().collect())
        } else {
            Err(format!(
                "{action} needs Ozone Managers as targets, got {targets:?}"
            ))
        }
    };
    Ok(match action.name() {
        "transfer-leader" => match om_targets()?.as_slice() {
            [one] => vec![transfer_leader(one)],
            _ => {
                return Err(format!(
                    "{action} needs exactly one target, got {targets:?}"
                ))
            }
        },
        "take-snapshot" => om_targets()?
            .into_iter()
            .map(|om| take_snapshot(oms, om))
            .collect(),
        "close-container" => match container.ok_or("close-container needs `container:`")? {
            ContainerRef::Id(id) => vec![close_container(id)],
            ContainerRef::Open => vec![close_open_containers()],
        },
        "prepare" => vec![prepare()],
        other => return Err(format!("ozone has no admin action {other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::ozone::admin;

    #[test]
    fn admin_command_lines() {
        let line = |w: Vec<String>| w.join(" ");
        assert_eq!(
            line(admin::roles()),
            "ozone admin om roles --service-id omservice --json"
        );
        assert_eq!(
            line(admin::transfer_leader("om2")),
            "ozone admin om transfer --service-id omservice -n om2"
        );
        assert_eq!(
            line(admin::transfer_leader_random()),
            "ozone admin om transfer --service-id omservice -r"
        );
        assert_eq!(
            line(admin::take_snapshot(&["om1", "om2", "om3"], "om2")),
            "ozone ratis snapshot create -peers om1:9872,om2:9872,om3:9872 -peerId om2"
        );
        assert_eq!(
            line(admin::close_container(5)),
            "ozone admin container close 5"
        );
        assert_eq!(
            line(admin::prepare()),
            "ozone admin om prepare --service-id omservice"
        );
        assert_eq!(
            line(admin::cancel_prepare()),
            "ozone admin om cancelprepare --service-id omservice"
        );
    }

    #[test]
    fn admin_actions_become_command_lines() {
        let act = |name: &str| Action::named(name).unwrap();
        let oms = ["om1", "om2", "om3"];
        let t = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let lines = |r: Result<Vec<Vec<String>>, String>| {
            r.unwrap().iter().map(|w| w.join(" ")).collect::<Vec<_>>()
        };
        assert_eq!(
            lines(admin_commands(
                act("transfer-leader"),
                &t(&["om2"]),
                None,
                &oms
            )),
            ["ozone admin om transfer --service-id omservice -n om2"]
        );
        assert_eq!(
            lines(admin_commands(
                act("take-snapshot"),
                &t(&["om1", "om3"]),
                None,
                &oms
            ))
            .len(),
            2
        );
        assert_eq!(
            lines(admin_commands(
                act("close-container"),
                &[],
                Some(ContainerRef::Id(1)),
                &oms
            )),
            ["ozone admin container close 1"]
        );
        assert_eq!(
            lines(admin_commands(act("prepare"), &t(&["om1"]), None, &oms)),
            ["ozone admin om prepare --service-id omservice"]
        );
        assert!(admin_commands(act("transfer-leader"), &t(&["om1", "om2"]), None, &oms).is_err());
        assert!(admin_commands(act("transfer-leader"), &t(&["dn1"]), None, &oms).is_err());
        assert!(admin_commands(act("close-container"), &[], None, &oms).is_err());
        assert!(admin_commands(act("pause"), &[], None, &oms).is_err());
    }

    #[test]
    fn close_container_takes_an_id_or_open() {
        let act = |name: &str| Action::named(name).unwrap();
        let oms = ["om1", "om2", "om3"];
        let open =
            admin_commands(act("close-container"), &[], Some(ContainerRef::Open), &oms).unwrap();
        assert_eq!(open.len(), 1);
        assert!(open[0][2].contains("ozone admin container list --state=OPEN"));
        assert!(open[0][2].contains("xargs -r -n1 ozone admin container close"));
        let parse = |text: &str| serde_saphyr::from_str::<ContainerRef>(text);
        assert_eq!(parse("open").unwrap(), ContainerRef::Open);
        assert_eq!(parse("7").unwrap(), ContainerRef::Id(7));
        assert!(parse("closed").is_err());
    }
}
