//! The data the page's script draws (timeline, latency, throughput), as one JSON document in
//! columns (small at 100,000 operations), embedded in a `<script type="application/json">`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::analyze::{Mark, Segment};
use super::load::{Op, OpStatus};
use super::violations::Violation;
use crate::faults::log::{fault_label, Window};

use regex::Regex;

use super::load::RunFolder;

/// Processes numbered from here on are the final reads (run/drive.rs: `processes × 1,000,000`).
const FINAL_READS: u64 = 1_000_000;

/// The workload's processes as the scenario sets them (`processes: 4`), if it says.
fn workload_processes(scenario: &str) -> Option<u64> {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"(?m)^\s+processes:\s*(\d+)").expect("regex"));
    re.captures(scenario)?[1].parse().ok().filter(|n| *n > 0)
}

/// The lanes of the timeline: one per workload process slot (a process that ended with an
/// unknown outcome hands its slot to a new process number, drawn in the same lane), and the
/// final reads in one lane. Returns each lane's label and each process's lane.
pub fn lanes(ops: &[Op], scenario: &str) -> (Vec<String>, BTreeMap<u64, usize>) {
    let slots = workload_processes(scenario);
    let mut procs: Vec<u64> = ops.iter().map(|o| o.process).collect();
    procs.sort_unstable();
    procs.dedup();
    let lane_key = |p: u64| -> (u8, u64) {
        match slots {
            _ if p >= FINAL_READS => (1, 0),
            Some(n) => (0, p % n),
            None => (0, p),
        }
    };
    let mut keys: Vec<(u8, u64)> = procs.iter().map(|p| lane_key(*p)).collect();
    keys.sort_unstable();
    keys.dedup();
    let labels = keys
        .iter()
        .map(|(group, n)| {
            if *group == 1 {
                "final reads".to_string()
            } else {
                format!("p{n}")
            }
        })
        .collect();
    let of = procs
        .iter()
        .map(|p| (*p, keys.binary_search(&lane_key(*p)).unwrap_or(0)))
        .collect();
    (labels, of)
}

pub fn document(
    run: &RunFolder,
    windows: &[Window],
    marks: &[Mark],
    segments: &[Segment],
    nodes: &[String],
    violations: &[Violation],
    end: u64,
) -> Value {
    let ops = &run.ops;
    // Every time in microseconds from the workload's start; the cluster's start is before 0.
    let t0 = run.clock.t0 / 1000;
    let us = |ns: u64| (ns / 1000) as i64 - t0 as i64;
    let (lanes, lane_of) = lanes(ops, &run.scenario);
    let mut fs: Vec<&str> = ops.iter().map(|o| o.f.as_str()).collect();
    fs.sort_unstable();
    fs.dedup();
    let mut keys: Vec<&str> = ops.iter().map(|o| o.key.as_deref().unwrap_or("")).collect();
    keys.sort_unstable();
    keys.dedup();
    let node_of = |n: &str| nodes.iter().position(|x| x == n);
    let n = ops.len();
    let (mut l, mut s, mut e, mut f, mut k, mut o, mut d, mut nd, mut p) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for op in ops {
        l.push(lane_of[&op.process]);
        p.push(op.process);
        s.push(us(op.invoke));
        e.push(op.complete.map_or(-1, us));
        f.push(fs.binary_search(&op.f.as_str()).unwrap_or(0));
        k.push(
            keys.binary_search(&op.key.as_deref().unwrap_or(""))
                .unwrap_or(0),
        );
        o.push(match op.outcome {
            OpStatus::Ok => 0,
            OpStatus::Fail => 1,
            OpStatus::Info => 2,
        });
        d.push(op.describe());
        nd.push(
            op.node
                .as_deref()
                .and_then(node_of)
                .map_or(-1, |i| i as i64),
        );
    }
    // Steps that are over at once (a restart, a start, a heal): a line and a label, no band.
    let banded: Vec<usize> = windows.iter().map(|w| w.event).collect();
    let instants: Vec<Value> = run
        .faults
        .iter()
        .enumerate()
        .filter(|(i, f)| f.applied() && !banded.contains(i))
        .map(|(_, f)| json!([us(f.started), fault_label(f)]))
        .collect();
    json!({
        "end": us(end),
        "t0": t0,
        "lanes": lanes,
        "fs": fs,
        "keys": keys,
        "nodes": nodes,
        "op": {"l": l, "p": p, "s": s, "e": e, "f": f, "k": k, "o": o, "d": d, "n": nd},
        "win": windows.iter().map(|w| json!([us(w.start), us(w.end), w.label, w.action])).collect::<Vec<_>>(),
        "inst": instants,
        "marks": marks.iter().map(|m| json!([us(m.time), node_of(&m.node), m.what])).collect::<Vec<_>>(),
        "segs": segments.iter().map(|g| json!([node_of(&g.node), g.state, us(g.start), us(g.end)])).collect::<Vec<_>>(),
        "viol": violations.iter().map(|v| {
            let bad = v.stale.as_ref().map(|s| s.read).or(v.bad);
            json!({"anchor": v.anchor, "key": v.key, "bad": bad,
                   "witness": v.stale.as_ref().map(|s| s.newer)})
        }).collect::<Vec<_>>(),
    })
}

/// JSON that is safe inside `<script type="application/json">`: every `<` becomes `\u003c`
/// (so neither `</script>` nor `<!--` can appear), which JSON.parse reads back unchanged.
pub fn embed(v: &Value) -> String {
    let text = serde_json::to_string(v).unwrap_or_else(|_| "{}".into());
    text.replace('<', "\\u003c")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_json_cannot_close_the_script() {
        let v = json!({"d": ["</script><script>alert(1)</script><!--"]});
        let text = embed(&v);
        assert!(!text.contains("</"));
        assert!(!text.contains("<!--"));
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }
}
