//! The line that says how a run is going while it plays: elapsed of duration, operations ok /
//! fail / info, the faults active now and the next step. On a terminal it is one line redrawn
//! in place (indicatif); otherwise (CI logs) one plain line every 10 seconds. `Activity`
//! (activity.rs, below the cluster that builds images) does the same for image builds and Maven
//! downloads.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use tokio_util::sync::CancellationToken;

pub use crate::activity::Activity;
use crate::activity::PLAIN_EVERY;
use crate::faults::FaultEngine;
use crate::recorder::Recorder;
use crate::scenario::plan::Plan;
use crate::scenario::units::format_seconds;

/// One step of the plan still to come, as the line shows it.
struct Upcoming {
    step: usize,
    at: Option<Duration>,
    text: String,
}

/// Shows progress until `stop` is cancelled, then clears the line.
pub async fn show(
    engine: Arc<FaultEngine>,
    recorder: Arc<Recorder>,
    plan: Plan,
    duration: Duration,
    workload_start: Instant,
    stop: CancellationToken,
) {
    let upcoming: Vec<Upcoming> = plan
        .steps
        .iter()
        .flat_map(|s| {
            s.firings.iter().map(move |f| Upcoming {
                step: s.step,
                at: f.at,
                text: match f.at {
                    Some(at) => format!("{} at {}", f.action.name(), format_seconds(at)),
                    None => format!("{} {}", f.action.name(), s.trigger),
                },
            })
        })
        .collect();
    let line = || {
        let elapsed = workload_start.elapsed();
        let (ok, fail, info) = recorder.tally();
        let active = engine.active_faults();
        let fired = engine.fired_steps();
        // The next time-triggered firing still ahead, else a step still waiting for its trigger.
        let next = upcoming
            .iter()
            .filter(|u| u.at.is_some_and(|at| at > elapsed))
            .min_by_key(|u| u.at)
            .or_else(|| {
                upcoming
                    .iter()
                    .find(|u| u.at.is_none() && !fired.contains(&u.step))
            })
            .map_or("none".to_string(), |u| u.text.clone());
        format!(
            "{}/{}  ok {ok} · fail {fail} · info {info}  | now: {}  | next: {next}",
            format_seconds(Duration::from_secs(elapsed.as_secs())),
            format_seconds(duration),
            if active.is_empty() {
                "no fault".to_string()
            } else {
                active.join(", ")
            },
        )
    };
    if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(duration.as_millis() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:20} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        loop {
            bar.set_position(
                (workload_start.elapsed().as_millis() as u64).min(bar.length().unwrap_or(0)),
            );
            bar.set_message(line());
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
        }
        bar.finish_and_clear();
    } else {
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(PLAIN_EVERY) => eprintln!("progress: {}", line()),
            }
        }
    }
}
