//! Operation counts: ok / fail / info per operation kind, for every report.

use crate::history::{History, Status};
use serde::Serialize;
use std::collections::BTreeMap;

/// How many operations ended each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub ok: usize,
    pub fail: usize,
    /// Unknown outcome: an `info` completion or none at all.
    pub info: usize,
}

impl Tally {
    pub fn total(&self) -> usize {
        self.ok + self.fail + self.info
    }

    fn add(&mut self, s: Status) {
        match s {
            Status::Ok => self.ok += 1,
            Status::Fail => self.fail += 1,
            Status::Info => self.info += 1,
        }
    }
}

/// Totals and a tally per `f`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub operations: usize,
    pub all: Tally,
    /// Invocations that never completed (counted in `info` too).
    pub pending: usize,
    pub by_f: BTreeMap<String, Tally>,
}

impl Counts {
    /// `1200 operations: 1100 ok, 40 fail, 60 info (read 600/0/10, write ...)`.
    pub fn text(&self) -> String {
        let per: Vec<String> = self
            .by_f
            .iter()
            .map(|(f, t)| format!("{f} {}/{}/{}", t.ok, t.fail, t.info))
            .collect();
        format!(
            "{} operations: {} ok, {} fail, {} info ({}: ok/fail/info)",
            self.operations,
            self.all.ok,
            self.all.fail,
            self.all.info,
            per.join(", ")
        )
    }
}

/// Counts the operations of a history.
pub fn summarize(history: &History) -> Counts {
    let mut c = Counts {
        operations: history.ops.len(),
        ..Counts::default()
    };
    for op in &history.ops {
        c.all.add(op.status);
        c.by_f.entry(op.f.clone()).or_default().add(op.status);
        if op.complete.is_none() {
            c.pending += 1;
        }
    }
    c
}
