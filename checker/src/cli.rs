//! What `chaos check PATH --model M [--format F] [--timeout 60s] [--json OUT]`
//! needs besides argument parsing: read, check, print, write JSON, exit code.

use crate::linearizable::{check, render, Budget, LinearizabilityResult};
use crate::model::{CheckError, ModelKind};
use crate::read::{read_history, Format, ReadError};
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// Exit code for bad input or arguments (Jepsen's).
pub const EXIT_BAD_INPUT: i32 = 254;

/// Why a file could not be checked at all (exit 254).
#[derive(Debug)]
pub enum CheckFileError {
    Read(ReadError),
    Check(CheckError),
    Json(String),
}

impl fmt::Display for CheckFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckFileError::Read(e) => write!(f, "{e}"),
            CheckFileError::Check(e) => write!(f, "{e}"),
            CheckFileError::Json(e) => write!(f, "cannot write JSON result: {e}"),
        }
    }
}

impl std::error::Error for CheckFileError {}

impl CheckFileError {
    pub fn exit_code(&self) -> i32 {
        EXIT_BAD_INPUT
    }
}

/// Reads and checks a history file; writes the result as JSON to `json` if given.
pub fn check_file(
    path: &Path,
    model: ModelKind,
    format: Format,
    budget: &Budget,
    json: Option<&Path>,
) -> Result<LinearizabilityResult, CheckFileError> {
    let history = read_history(path, format).map_err(CheckFileError::Read)?;
    let result = check(&history, model, budget).map_err(CheckFileError::Check)?;
    if let Some(out) = json {
        let text = serde_json::to_string_pretty(&result)
            .map_err(|e| CheckFileError::Json(e.to_string()))?;
        std::fs::write(out, text)
            .map_err(|e| CheckFileError::Json(format!("{}: {e}", out.display())))?;
    }
    Ok(result)
}

/// Runs a whole `chaos check`: prints the verdict and explanation to stdout (errors
/// to stderr, naming the file) and returns the exit code (0 ok, 1 illegal,
/// 2 unknown, 254 bad input).
pub fn run(
    path: &Path,
    model: ModelKind,
    format: Format,
    timeout: Duration,
    json: Option<&Path>,
) -> i32 {
    let budget = Budget::with_timeout(timeout);
    match check_file(path, model, format, &budget, json) {
        Ok(r) => {
            println!("{}", render(&r));
            r.verdict.exit_code()
        }
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            e.exit_code()
        }
    }
}

/// Parses `60s`, `500ms`, `2m`, `1h` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(
        s.find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(s.len()),
    );
    let n: f64 = num
        .parse()
        .map_err(|_| format!("bad duration {s:?} (expected e.g. 60s, 500ms, 2m)"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1e3,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => {
            return Err(format!(
                "bad duration unit in {s:?} (expected ms, s, m or h)"
            ))
        }
    };
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(format!("bad duration {s:?}"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("1y").is_err());
    }

    #[test]
    fn bad_files_exit_254_with_the_line() {
        let dir = std::env::temp_dir().join(format!("chaos-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.jsonl");
        std::fs::write(
            &bad,
            "{\"process\":0,\"type\":\"invoke\",\"f\":\"read\"}\n{oops\n",
        )
        .unwrap();
        let e = check_file(
            &bad,
            ModelKind::Register,
            Format::Auto,
            &Budget::default(),
            None,
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), 254);
        assert!(e.to_string().starts_with("line 2:"), "{e}");
        let good = dir.join("good.jsonl");
        std::fs::write(
            &good,
            "{\"process\":0,\"type\":\"invoke\",\"f\":\"write\",\"value\":1}\n{\"process\":0,\"type\":\"ok\",\"f\":\"write\",\"value\":1}\n",
        )
        .unwrap();
        let out = dir.join("result.json");
        let r = check_file(
            &good,
            ModelKind::Register,
            Format::Auto,
            &Budget::default(),
            Some(&out),
        )
        .unwrap();
        assert_eq!(r.verdict.exit_code(), 0);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(json["verdict"], "ok");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
