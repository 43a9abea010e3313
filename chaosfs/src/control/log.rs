//! The fault log: one JSON line per event, appended to the log file and echoed on stderr,
//! stamped in UTC RFC 3339 (no date crate needed for one format).

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::{lock, Control};

pub fn now_rfc3339() -> (String, u128) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (rfc3339(d), d.as_nanos())
}

/// UTC RFC 3339 with nanoseconds, from a duration since the Unix epoch.
pub fn rfc3339(d: Duration) -> String {
    let secs = d.as_secs() as i64;
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = if month <= 2 { y + 1 } else { y };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        d.subsec_nanos()
    )
}

impl Control {
    /// Append one event to the fault log and to stderr (`chaosfs: {json}`).
    pub fn log_event(&self, event: &str, fault: Option<&str>, path: Option<&str>, detail: Value) {
        let (time, unix_ns) = now_rfc3339();
        let line = json!({
            "time": time,
            "unix_ns": unix_ns as u64,
            "event": event,
            "fault": fault,
            "path": path,
            "detail": detail,
        })
        .to_string();
        let mut log = lock(&self.log);
        if let Some(f) = log.as_mut() {
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
        drop(log);
        eprintln!("chaosfs: {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_format() {
        assert_eq!(
            rfc3339(Duration::new(0, 5)),
            "1970-01-01T00:00:00.000000005Z"
        );
        assert_eq!(
            rfc3339(Duration::new(1_709_251_199, 0)),
            "2024-02-29T23:59:59.000000000Z"
        );
    }
}
