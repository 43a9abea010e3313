//! The data the page's script draws (timeline, latency, throughput), as one JSON document in
//! columns (small at 100,000 operations), embedded in a `<script type="application/json">`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::analyze::{Mark, Segment};
use super::load::{Op, OpStatus};
use super::violations::Violation;
use crate::faults::log::Window;

fn us(ns: u64) -> u64 {
    ns / 1000
}

pub fn document(
    ops: &[Op],
    windows: &[Window],
    marks: &[Mark],
    segments: &[Segment],
    nodes: &[String],
    violations: &[Violation],
    end: u64,
) -> Value {
    let mut lanes: Vec<u64> = ops.iter().map(|o| o.process).collect();
    lanes.sort_unstable();
    lanes.dedup();
    let lane_of: BTreeMap<u64, usize> = lanes.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    let mut fs: Vec<&str> = ops.iter().map(|o| o.f.as_str()).collect();
    fs.sort_unstable();
    fs.dedup();
    let mut keys: Vec<&str> = ops.iter().map(|o| o.key.as_deref().unwrap_or("")).collect();
    keys.sort_unstable();
    keys.dedup();
    let node_of = |n: &str| nodes.iter().position(|x| x == n);
    let n = ops.len();
    let (mut l, mut s, mut e, mut f, mut k, mut o, mut d, mut nd) = (
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
        s.push(us(op.invoke) as i64);
        e.push(op.complete.map_or(-1, |c| us(c) as i64));
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
    json!({
        "end": us(end),
        "lanes": lanes,
        "fs": fs,
        "keys": keys,
        "nodes": nodes,
        "op": {"l": l, "s": s, "e": e, "f": f, "k": k, "o": o, "d": d, "n": nd},
        "win": windows.iter().map(|w| json!([us(w.start), us(w.end), w.label, w.action])).collect::<Vec<_>>(),
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
