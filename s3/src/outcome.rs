//! Outcomes of S3 operations, classified the way the history needs them: `Ok` (took effect, or a
//! definite answer for a read), `Fail` (certainly did not take effect) or `Info` (unknown). Every
//! status, S3 error code and transport error is classified here ([`classify`],
//! [`classify_transport`], [`classify_send_error`]) and nowhere else.

use serde::Deserialize;

/// The outcome of one operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum S3Outcome<T> {
    Ok(T),
    /// Certainly not applied: refused before sending, or a definite refusal (4xx, 412, ...).
    Fail(String),
    /// Unknown: 5xx, a timeout or a reset after sending, 409 ConditionalRequestConflict.
    Info(String),
}

impl<T> S3Outcome<T> {
    pub fn is_ok(&self) -> bool {
        matches!(self, S3Outcome::Ok(_))
    }
    pub fn is_fail(&self) -> bool {
        matches!(self, S3Outcome::Fail(_))
    }
    pub fn is_info(&self) -> bool {
        matches!(self, S3Outcome::Info(_))
    }
    pub fn ok(self) -> Option<T> {
        match self {
            S3Outcome::Ok(t) => Some(t),
            _ => None,
        }
    }
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> S3Outcome<U> {
        match self {
            S3Outcome::Ok(t) => S3Outcome::Ok(f(t)),
            S3Outcome::Fail(r) => S3Outcome::Fail(r),
            S3Outcome::Info(r) => S3Outcome::Info(r),
        }
    }
    /// The reason of a `Fail` or `Info`.
    pub fn reason(&self) -> Option<&str> {
        match self {
            S3Outcome::Ok(_) => None,
            S3Outcome::Fail(r) | S3Outcome::Info(r) => Some(r),
        }
    }
}

/// An outcome with the raw HTTP status (None when no response was received) and the S3 error
/// code from the body, when there was one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct S3Reply<T> {
    pub status: Option<u16>,
    pub error_code: Option<String>,
    pub outcome: S3Outcome<T>,
}

/// Which operation a response answers (classification depends on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Get,
    Put,
    /// A PUT with If-Match: a 404 means the object is gone, so the write was refused.
    PutIfMatch,
    PutIfNoneMatch,
    Delete,
    List,
    CreateBucket,
}

/// How a response was classified, before its body is turned into a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// 2xx, or a definite answer that is a success for this operation (404 on GET: absent;
    /// 404 on DELETE: already gone; 304 on a conditional GET: not modified; 409
    /// BucketAlreadyOwnedByYou on create bucket).
    Ok,
    Fail(String),
    Info(String),
}

/// S3's `<Error>` body.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ErrorBody {
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

/// Parses an `<Error><Code>..</Code><Message>..</Message></Error>` body; anything else gives
/// an empty one (HEAD-like answers and proxies send no XML).
pub fn parse_error_body(body: &[u8]) -> ErrorBody {
    let Ok(text) = std::str::from_utf8(body) else {
        return ErrorBody::default();
    };
    if !text.contains("<Error") {
        return ErrorBody::default();
    }
    quick_xml::de::from_str::<ErrorBody>(text).unwrap_or_default()
}

/// Classifies a response that was received.
pub fn classify(op: OpKind, status: u16, error_code: Option<&str>) -> Class {
    let code = error_code.unwrap_or("");
    let what = |s: &str| {
        if code.is_empty() {
            format!("{s} (HTTP {status})")
        } else {
            format!("{s} (HTTP {status} {code})")
        }
    };
    match status {
        200..=299 => Class::Ok,
        304 if op == OpKind::Get => Class::Ok,
        300..=399 => Class::Fail(what("redirect not followed; the request was not applied")),
        412 => Class::Fail(what("precondition failed")),
        409 if code == "ConditionalRequestConflict" => Class::Info(what(
            "conflicting conditional request in flight; the write may or may not apply",
        )),
        409 if code == "PreconditionFailed" => Class::Fail(what("precondition failed")),
        409 if op == OpKind::CreateBucket && code == "BucketAlreadyOwnedByYou" => Class::Ok,
        404 if op == OpKind::Get && code != "NoSuchBucket" => Class::Ok,
        404 if op == OpKind::Delete && code != "NoSuchBucket" => Class::Ok,
        404 if op == OpKind::PutIfMatch => Class::Fail(what("precondition failed: no such key")),
        400..=499 => Class::Fail(what("refused")),
        500..=599 => Class::Info(what("server error; the operation may or may not apply")),
        _ => Class::Info(what("unexpected status")),
    }
}

/// How a transport error is classified: refused before sending (connect failures, a request
/// that could not be built) is `Fail`; everything after sending (timeouts, resets, a broken
/// body) is `Info`.
pub fn classify_transport(before_sending: bool, reason: String) -> Class {
    if before_sending {
        Class::Fail(reason)
    } else {
        Class::Info(reason)
    }
}

/// A request `send` gave up on: refused before sending when the connection was never made or
/// the request could not be built; otherwise after sending (a timeout says so).
pub fn classify_send_error(e: &reqwest::Error) -> Class {
    let before = e.is_connect() || e.is_builder();
    let reason = if e.is_timeout() && !before {
        format!("timed out after sending: {}", error_chain(e))
    } else {
        error_chain(e)
    };
    classify_transport(before, reason)
}

/// An error and its sources, each once, joined by `: `.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(src) = cur {
        let t = src.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = src.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(body: &str) -> Option<String> {
        parse_error_body(body.as_bytes()).code
    }

    #[test]
    fn recorded_responses() {
        // A 412 from a conditional PUT (AWS and MinIO answer this way).
        let b = r#"<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-None-Match</Condition><RequestId>X</RequestId><HostId>Y</HostId></Error>"#;
        let c = code_of(b);
        assert_eq!(c.as_deref(), Some("PreconditionFailed"));
        assert!(
            matches!(classify(OpKind::PutIfNoneMatch, 412, c.as_deref()), Class::Fail(r) if r.contains("precondition"))
        );

        // 409 ConditionalRequestConflict: another conditional write raced; unknown.
        let b = "<Error><Code>ConditionalRequestConflict</Code><Message>A conflicting conditional operation is currently in progress against this resource.</Message></Error>";
        let c = code_of(b);
        assert!(matches!(
            classify(OpKind::PutIfMatch, 409, c.as_deref()),
            Class::Info(_)
        ));

        // 409 PreconditionFailed (some stores use 409 instead of 412).
        let b = "<Error><Code>PreconditionFailed</Code></Error>";
        assert!(matches!(
            classify(OpKind::PutIfNoneMatch, 409, code_of(b).as_deref()),
            Class::Fail(_)
        ));

        // 404 NoSuchKey on If-Match: the object is gone, the write was refused.
        let b = "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>";
        assert!(matches!(
            classify(OpKind::PutIfMatch, 404, code_of(b).as_deref()),
            Class::Fail(_)
        ));
        // 404 NoSuchKey on GET is a definite "absent"; on DELETE "already gone".
        assert_eq!(classify(OpKind::Get, 404, code_of(b).as_deref()), Class::Ok);
        assert_eq!(
            classify(OpKind::Delete, 404, code_of(b).as_deref()),
            Class::Ok
        );
        // ... but NoSuchBucket is a refusal.
        let nb = "<Error><Code>NoSuchBucket</Code></Error>";
        assert!(matches!(
            classify(OpKind::Get, 404, code_of(nb).as_deref()),
            Class::Fail(_)
        ));

        // 5xx: unknown, whatever the body (here none at all, as from a proxy).
        assert!(matches!(
            classify(OpKind::Put, 503, code_of("").as_deref()),
            Class::Info(_)
        ));
        let b = "<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>";
        assert!(
            matches!(classify(OpKind::PutIfMatch, 500, code_of(b).as_deref()), Class::Info(r) if r.contains("InternalError"))
        );

        // 403 SignatureDoesNotMatch: refused.
        let b = "<Error><Code>SignatureDoesNotMatch</Code></Error>";
        assert!(matches!(
            classify(OpKind::Put, 403, code_of(b).as_deref()),
            Class::Fail(_)
        ));

        // 2xx, 304 on conditional GET, a redirect that is not followed.
        assert_eq!(classify(OpKind::Put, 200, None), Class::Ok);
        assert_eq!(classify(OpKind::Delete, 204, None), Class::Ok);
        assert_eq!(classify(OpKind::Get, 304, None), Class::Ok);
        let b = "<Error><Code>PermanentRedirect</Code></Error>";
        assert!(matches!(
            classify(OpKind::Put, 301, code_of(b).as_deref()),
            Class::Fail(_)
        ));

        // Bucket creation: already ours is fine, taken by someone else is not.
        let b = "<Error><Code>BucketAlreadyOwnedByYou</Code></Error>";
        assert_eq!(
            classify(OpKind::CreateBucket, 409, code_of(b).as_deref()),
            Class::Ok
        );
        let b = "<Error><Code>BucketAlreadyExists</Code></Error>";
        assert!(matches!(
            classify(OpKind::CreateBucket, 409, code_of(b).as_deref()),
            Class::Fail(_)
        ));
    }

    #[test]
    fn transport_errors() {
        assert!(matches!(
            classify_transport(true, "connection refused".into()),
            Class::Fail(_)
        ));
        assert!(matches!(
            classify_transport(false, "timed out".into()),
            Class::Info(_)
        ));
    }

    #[test]
    fn garbage_bodies_do_not_panic() {
        for b in [
            &b"\xff\xfe"[..],
            b"<Error>",
            b"<Error><Code>",
            b"not xml",
            b"<Error><Code>A</Code><Code>B</Code></Error>",
        ] {
            let _ = parse_error_body(b);
        }
    }
}
