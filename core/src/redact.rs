//! Credentials out of every text a run folder shows: node logs as they are written, and
//! everything the report reads (histories, scenarios, faults, results). S3 secret keys,
//! passwords, tokens, signed URLs, Authorization headers and AWS key ids become `[redacted]`.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};
use serde_json::Value;

fn patterns() -> &'static (RegexSet, Vec<(Regex, &'static str)>) {
    static P: OnceLock<(RegexSet, Vec<(Regex, &'static str)>)> = OnceLock::new();
    P.get_or_init(|| {
        let rules: Vec<(&str, &str)> = vec![
            // Authorization headers: everything after the colon.
            (
                r#"(?i)(\bauthorization["']?\s*[:=]\s*)[^\n]*"#,
                "${1}[redacted]",
            ),
            // key = value, key: value, "key": "value" for secret-looking keys.
            (
                r#"(?i)(\b[\w.-]*(?:secret|password|passwd|token|api[_-]?key|access[_-]?key|credential|signature|session[_-]?key|private[_-]?key)[\w.-]*\b["']?\s*[:=]\s*["']?)([^\s"',;&}\]]+)"#,
                "${1}[redacted]",
            ),
            // Command-line flags: --secret-key VALUE, --password=VALUE.
            (
                r#"(?i)(--?[\w-]*(?:secret|password|passwd|token|credential)[\w-]*(?:\s+|=)["']?)([^\s"']+)"#,
                "${1}[redacted]",
            ),
            // Query strings of signed URLs.
            (
                r"(?i)(x-amz-(?:signature|credential|security-token)=)[^&\s]+",
                "${1}[redacted]",
            ),
            // AWS access key ids.
            (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "[redacted]"),
            // user:password@ in URLs.
            (r"(://[^/\s:@]+:)[^@\s/]+@", "${1}[redacted]@"),
            // PEM private keys.
            (
                r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
                "[redacted private key]",
            ),
        ];
        let set = RegexSet::new(rules.iter().map(|(p, _)| *p)).expect("redaction patterns");
        let list = rules
            .into_iter()
            .map(|(p, r)| (Regex::new(p).expect("redaction pattern"), r))
            .collect();
        (set, list)
    })
}

/// Replaces credentials (S3 secret keys, passwords, tokens, signed URLs, Authorization headers,
/// AWS key ids, private keys) with `[redacted]`.
pub fn redact(text: &str) -> String {
    let (set, list) = patterns();
    let hits = set.matches(text);
    if !hits.matched_any() {
        return text.to_string();
    }
    let mut out = text.to_string();
    for i in hits.iter() {
        let (re, rep) = &list[i];
        out = re.replace_all(&out, *rep).into_owned();
    }
    out
}

/// Redacts every string inside a JSON value (keys that name a secret blank their value).
pub fn redact_value(v: &mut Value) {
    match v {
        Value::String(s) => {
            let r = redact(s);
            if r != *s {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_value),
        Value::Object(o) => {
            for (k, val) in o.iter_mut() {
                let lk = k.to_ascii_lowercase();
                if ["secret", "password", "token", "credential", "access_key"]
                    .iter()
                    .any(|w| lk.contains(w))
                    && !val.is_null()
                {
                    *val = Value::String("[redacted]".into());
                } else {
                    redact_value(val);
                }
            }
        }
        _ => {}
    }
}
