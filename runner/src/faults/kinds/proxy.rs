//! Faults in the harness's proxy between the clients and a node's ports.

use futures_util::future::BoxFuture;
use regex::Regex;

use super::{Action, Applied, Cx, Fault, Healed, Mechanism};
use crate::cluster::proxy::{Proxy, RequestMatch};
use crate::cluster::Cluster;
use crate::error::HarnessError;

/// Forwards the next `count` matching requests, drops their replies, closes the connection.
pub struct LoseReply;
/// Holds every reply for `delay`.
pub struct DelayReplies;
/// Resets every open connection (clients see ECONNRESET).
pub struct ResetConnections;
/// Removes every proxy fault.
pub struct ClearProxy;

/// The nodes whose proxies hold a fault (what the final heal clears).
const IN_FORCE: &str = "proxy";

/// Does `each` on every proxy in front of every target; a target without one is an error.
fn on_proxies(cx: &Cx<'_>, in_force: Option<bool>, each: impl Fn(&Proxy)) -> Applied {
    let cluster = cx.cluster();
    for node in cx.targets {
        let proxies = cluster.proxies_of(node);
        if proxies.is_empty() {
            let e = HarnessError::infra(format!("{node} has no proxy in front of it"));
            return (Err(e), None);
        }
        proxies.into_iter().for_each(&each);
        if let Some(on) = in_force {
            cluster.note_in_force(IN_FORCE, node, on);
        }
    }
    (Ok(()), None)
}

impl Fault for LoseReply {
    fn name(&self) -> &'static str {
        "lose-reply"
    }
    fn undo(&self) -> Option<Action> {
        Some(Action::of(&ClearProxy))
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Proxy
    }
    fn takes(&self) -> &'static [&'static str] {
        &["match", "count"]
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move {
            let p = cx.params;
            on_proxies(&cx, Some(true), |proxy| {
                let matching = RequestMatch {
                    method: p.method.clone(),
                    path: p.path.as_ref().and_then(|r| Regex::new(r).ok()),
                    header: p
                        .header
                        .as_ref()
                        .and_then(|(n, v)| Regex::new(v).ok().map(|v| (n.clone(), v))),
                };
                proxy.lose_replies(matching, p.count.unwrap_or(1));
            })
        })
    }
}

impl Fault for DelayReplies {
    fn name(&self) -> &'static str {
        "delay-replies"
    }
    fn undo(&self) -> Option<Action> {
        Some(Action::of(&ClearProxy))
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Proxy
    }
    fn takes(&self) -> &'static [&'static str] {
        &["delay"]
    }
    fn needs(&self) -> &'static [&'static str] {
        &["delay"]
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move {
            on_proxies(&cx, Some(true), |proxy| {
                proxy.delay_replies(cx.params.delay)
            })
        })
    }
}

impl Fault for ResetConnections {
    fn name(&self) -> &'static str {
        "reset-connections"
    }
    fn over_once_applied(&self) -> bool {
        true
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Proxy
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move { on_proxies(&cx, None, Proxy::reset_connections) })
    }
    fn ends_when_back(&self) -> bool {
        true
    }
}

impl Fault for ClearProxy {
    fn name(&self) -> &'static str {
        "clear-proxy"
    }
    fn over_once_applied(&self) -> bool {
        true
    }
    fn mechanism(&self) -> Mechanism {
        Mechanism::Proxy
    }
    fn apply<'a>(&'a self, cx: Cx<'a>) -> BoxFuture<'a, Applied> {
        Box::pin(async move { on_proxies(&cx, Some(false), Proxy::clear) })
    }
    /// The proxies a lost reply or a delay is still armed in are cleared.
    fn final_heal<'a>(&'a self, cluster: &'a Cluster) -> BoxFuture<'a, Vec<Healed>> {
        Box::pin(async move {
            let mut done = Vec::new();
            for node in cluster.in_force(IN_FORCE) {
                cluster.proxies_of(&node).into_iter().for_each(Proxy::clear);
                cluster.note_in_force(IN_FORCE, &node, false);
                done.push((node, self.name(), Ok::<(), HarnessError>(())));
            }
            done
        })
    }
}
