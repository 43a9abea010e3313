//! What a fencing run records: one event per step a writer takes, timed by a `Recorder` whose
//! clock never repeats (the checks compare times, so equal ones would be ambiguous).

use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::protocol::UploadId;

/// One recorded event; `time` is nanoseconds since the recorder started (strictly increasing).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FencingEvent {
    TakeoverStarted {
        time: u64,
        owner: String,
        term: u64,
    },
    TakeoverCompleted {
        time: u64,
        owner: String,
        term: u64,
        restore_point: Vec<UploadId>,
    },
    TakeoverRefused {
        time: u64,
        owner: String,
        term: u64,
        reason: String,
    },
    UploadInvoked {
        time: u64,
        upload: UploadId,
    },
    /// `fence_invoked`: when the conditional fence write that acknowledged it was sent.
    UploadAcked {
        time: u64,
        upload: UploadId,
        fence_invoked: u64,
    },
    /// Certainly not acknowledged, data object certainly not written.
    UploadFailed {
        time: u64,
        upload: UploadId,
        reason: String,
    },
    /// Not acknowledged; its data object may exist.
    UploadUnknown {
        time: u64,
        upload: UploadId,
        reason: String,
    },
    Fenced {
        time: u64,
        owner: String,
        term: u64,
        reason: String,
    },
    /// The writer wrote the data object of `upload` and now stalls for `stall_ms` before its
    /// fence advance (a long GC pause): the next takeover may complete meanwhile.
    WriterStalled {
        time: u64,
        upload: UploadId,
        stall_ms: u64,
    },
}

impl FencingEvent {
    /// Nanoseconds since the recorder started.
    pub fn time(&self) -> u64 {
        *self.time_ref()
    }

    /// Puts the event on another clock (a run's reader counts from the workload's start).
    pub fn set_time(&mut self, time: u64) {
        *self.time_mut() = time;
    }

    fn time_ref(&self) -> &u64 {
        match self {
            FencingEvent::TakeoverStarted { time, .. }
            | FencingEvent::TakeoverCompleted { time, .. }
            | FencingEvent::TakeoverRefused { time, .. }
            | FencingEvent::UploadInvoked { time, .. }
            | FencingEvent::UploadAcked { time, .. }
            | FencingEvent::UploadFailed { time, .. }
            | FencingEvent::UploadUnknown { time, .. }
            | FencingEvent::Fenced { time, .. }
            | FencingEvent::WriterStalled { time, .. } => time,
        }
    }

    fn time_mut(&mut self) -> &mut u64 {
        match self {
            FencingEvent::TakeoverStarted { time, .. }
            | FencingEvent::TakeoverCompleted { time, .. }
            | FencingEvent::TakeoverRefused { time, .. }
            | FencingEvent::UploadInvoked { time, .. }
            | FencingEvent::UploadAcked { time, .. }
            | FencingEvent::UploadFailed { time, .. }
            | FencingEvent::UploadUnknown { time, .. }
            | FencingEvent::Fenced { time, .. }
            | FencingEvent::WriterStalled { time, .. } => time,
        }
    }
}

/// Collects events with strictly increasing times.
#[derive(Debug)]
pub struct Recorder {
    start: Instant,
    inner: Mutex<(u64, Vec<FencingEvent>)>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder {
            start: Instant::now(),
            inner: Mutex::new((0, Vec::new())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, Vec<FencingEvent>)> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Nanoseconds since the start, never equal to an earlier reading.
    pub fn now(&self) -> u64 {
        let mut g = self.lock();
        let t = (self.start.elapsed().as_nanos() as u64).max(g.0 + 1);
        g.0 = t;
        t
    }

    /// Records an event built from a fresh time.
    pub fn record(&self, f: impl FnOnce(u64) -> FencingEvent) {
        let mut g = self.lock();
        let t = (self.start.elapsed().as_nanos() as u64).max(g.0 + 1);
        g.0 = t;
        g.1.push(f(t));
    }

    pub fn events(&self) -> Vec<FencingEvent> {
        self.lock().1.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_as_tagged_json() {
        let e = FencingEvent::UploadAcked {
            time: 5,
            upload: UploadId {
                term: 1,
                owner: "a".into(),
                seq: 2,
            },
            fence_invoked: 4,
        };
        let j = serde_json::to_string(&e).unwrap();
        assert!(j.contains("\"type\":\"upload_acked\""), "{j}");
        let back: FencingEvent = serde_json::from_str(&j).unwrap();
        assert_eq!(back, e);
    }
}
