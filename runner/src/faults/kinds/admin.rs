//! Faults the system adapter carries out with its own admin tools (not every system has
//! them: `SystemInfo::admin_actions` names the ones it has).

use futures_util::future::BoxFuture;

use super::{Action, Applied, Cx, Fault, Mechanism};
use crate::error::HarnessError;

/// The target becomes the leader (Ozone: `ozone admin om transfer`, or with `via: raft`
/// `ozone ratis election transfer`).
pub struct TransferLeader;
/// Each target takes a snapshot of its replicated state now.
pub struct TakeSnapshot;
/// Closes a storage container (`container:`; Ozone: `ozone admin container close`).
pub struct CloseContainer;
/// Prepares the replicated service for an upgrade (Ozone: `ozone admin om prepare`).
pub struct Prepare;

/// The adapter's admin command for `fault` on the targets.
fn admin<'a>(fault: &'static dyn Fault, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
    Box::pin(async move {
        let outcome = cx
            .engine
            .adapter
            .admin(Action::of(fault), cx.targets, cx.params)
            .await
            .map(|_| ())
            .map_err(HarnessError::infra);
        (outcome, None)
    })
}

impl Fault for TransferLeader {
    fn name(&self) -> &'static str {
        "transfer-leader"
    }
    fn takes(&self) -> &'static [&'static str] {
        &["via"]
    }
    fn over_once_applied(&self) -> bool {
        true
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Admin
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        admin(&TransferLeader, cx)
    }
}

impl Fault for TakeSnapshot {
    fn name(&self) -> &'static str {
        "take-snapshot"
    }
    fn over_once_applied(&self) -> bool {
        true
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Admin
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        admin(&TakeSnapshot, cx)
    }
}

impl Fault for CloseContainer {
    fn name(&self) -> &'static str {
        "close-container"
    }
    fn over_once_applied(&self) -> bool {
        true
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Admin
    }
    fn takes(&self) -> &'static [&'static str] {
        &["container"]
    }
    fn needs(&self) -> &'static [&'static str] {
        &["container"]
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        admin(&CloseContainer, cx)
    }
}

impl Fault for Prepare {
    fn name(&self) -> &'static str {
        "prepare"
    }
    fn over_once_applied(&self) -> bool {
        true
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Admin
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        admin(&Prepare, cx)
    }
}
