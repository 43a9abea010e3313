//! Filesystem faults through chaosfs (`chaosfs ctl` in the node), and the crash that drops
//! what was not fsynced.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::{on_each, Action, Applied, Cx, Fault, Healed, Mechanism};
use crate::cluster::Cluster;
use crate::scenario::FaultStep;

/// Every fsync / fdatasync waits `delay` (± `jitter`), optionally only for `paths`.
pub struct SlowFsync;
/// The next `count` fsyncs (or a `fraction` of them) fail with `errno` (EIO).
pub struct FailFsync;
/// Writes wait `delay`.
pub struct SlowWrites;
/// Drops un-fsynced data (`lose-unsynced: true`), kills the node, starts it again.
pub struct Crash;
/// Removes every filesystem fault.
pub struct ClearFs;

/// The nodes with a chaosfs fault set (what the final heal clears).
const IN_FORCE: &str = "chaosfs";

fn ms(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

/// `chaosfs ctl WORDS` on every target; `in_force` notes (or forgets) the fault there.
async fn ctl(cx: &Cx<'_>, words: Vec<String>, in_force: bool) -> Applied {
    let cluster = cx.cluster();
    let words = &words;
    on_each(cx.targets, move |node| async move {
        cluster.chaosfs_ctl(node, words).await?;
        cluster.note_in_force(IN_FORCE, node, in_force);
        Ok(())
    })
    .await
}

/// A delay fault's words: `VERB 10ms [--jitter 5ms] [--paths RE]`.
fn delay_words(verb: &str, cx: &Cx<'_>, paths: bool) -> Vec<String> {
    let p = cx.params;
    let mut w = vec![verb.to_string(), ms(p.delay.unwrap_or_default())];
    if let Some(j) = p.jitter {
        w.extend(["--jitter".to_string(), ms(j)]);
    }
    if let Some(paths) = p.paths.as_ref().filter(|_| paths) {
        w.extend(["--paths".to_string(), paths.clone()]);
    }
    w
}

impl Fault for SlowFsync {
    fn name(&self) -> &'static str {
        "slow-fsync"
    }
    fn undo(&self) -> Option<Action> {
        Some(Action::of(&ClearFs))
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Chaosfs
    }
    fn takes(&self) -> &'static [&'static str] {
        &["delay", "jitter", "paths"]
    }
    fn needs(&self) -> &'static [&'static str] {
        &["delay"]
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move { ctl(&cx, delay_words("fsync-delay", &cx, true), true).await })
    }
}

impl Fault for FailFsync {
    fn name(&self) -> &'static str {
        "fail-fsync"
    }
    fn undo(&self) -> Option<Action> {
        Some(Action::of(&ClearFs))
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Chaosfs
    }
    fn takes(&self) -> &'static [&'static str] {
        &["count", "errno", "fraction", "paths"]
    }
    fn check(&self, step: &FaultStep) -> Option<(&'static str, &'static str)> {
        (step.count.is_some() == step.fraction.is_some()).then_some((
            "count",
            "fail-fsync needs `count:` or `fraction:` (one of them)",
        ))
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move {
            let p = cx.params;
            let mut w = vec!["fsync-error".to_string()];
            if let Some(c) = p.count {
                w.extend(["--count".to_string(), c.to_string()]);
            }
            if let Some(f) = p.fraction {
                w.extend(["--fraction".to_string(), f.to_string()]);
            }
            if let Some(e) = &p.errno {
                w.extend(["--errno".to_string(), e.clone()]);
            }
            if let Some(paths) = &p.paths {
                w.extend(["--paths".to_string(), paths.clone()]);
            }
            ctl(&cx, w, true).await
        })
    }
}

impl Fault for SlowWrites {
    fn name(&self) -> &'static str {
        "slow-writes"
    }
    fn undo(&self) -> Option<Action> {
        Some(Action::of(&ClearFs))
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Chaosfs
    }
    fn takes(&self) -> &'static [&'static str] {
        &["delay", "jitter"]
    }
    fn needs(&self) -> &'static [&'static str] {
        &["delay"]
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move { ctl(&cx, delay_words("write-delay", &cx, false), true).await })
    }
}

impl Fault for Crash {
    fn name(&self) -> &'static str {
        "crash"
    }
    fn takes(&self) -> &'static [&'static str] {
        &["lose-unsynced"]
    }
    fn needs_chaosfs(&self, step: &FaultStep) -> bool {
        step.lose_unsynced == Some(true)
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        let cluster = cx.cluster();
        let lose = cx.params.lose_unsynced;
        Box::pin(on_each(cx.targets, move |node| async move {
            if lose {
                cluster.chaosfs_ctl(node, &["crash".to_string()]).await?;
            }
            cluster.kill(node).await?;
            cluster.start(node).await
        }))
    }
    fn brings_back(&self) -> bool {
        true
    }
    fn ends_when_back(&self) -> bool {
        true
    }
}

impl Fault for ClearFs {
    fn name(&self) -> &'static str {
        "clear-fs"
    }
    fn over_once_applied(&self) -> bool {
        true
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Chaosfs
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move { ctl(&cx, vec!["clear".to_string()], false).await })
    }
    /// The nodes a filesystem fault is still set on are cleared.
    fn final_heal<'a>(&'a self, cluster: &'a Cluster) -> BoxFuture<'a, Vec<Healed>> {
        Box::pin(async move {
            let mut done = Vec::new();
            for node in cluster.in_force(IN_FORCE) {
                let outcome = cluster.chaosfs_ctl(&node, &["clear".to_string()]).await;
                cluster.note_in_force(IN_FORCE, &node, false);
                done.push((node, self.name(), outcome.map(|_| ())));
            }
            done
        })
    }
}
