//! A small S3 client: path-style URLs, SigV4 with the payload hash, no retries, no redirects,
//! explicit timeouts, every answer classified as ok / fail / info.

use std::time::{Duration, SystemTime};

use serde::Deserialize;

use crate::outcome::{
    classify, classify_send_error, classify_transport, error_chain, parse_error_body, Class,
    OpKind, S3Outcome, S3Reply,
};
use crate::sign::{sign_headers, Secret, SignInput, SignMode};

/// Timeouts of every request. A request that times out after sending is `Info`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Connecting (a connect timeout means nothing was sent: `Fail`).
    pub connect: Duration,
    /// The whole request, from sending to the last byte of the answer.
    pub request: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(2),
            request: Duration::from_secs(5),
        }
    }
}

/// A condition on a PUT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PutCondition {
    None,
    /// `If-None-Match: *`: create only.
    IfNoneMatchAny,
    /// `If-Match: <etag>`: overwrite only this version.
    IfMatch(String),
}

/// A condition on a GET.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GetCondition {
    pub if_match: Option<String>,
    pub if_none_match: Option<String>,
}

/// An object as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub body: Vec<u8>,
    pub etag: Option<String>,
}

/// The answer to a GET.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GetResult {
    Found(Object),
    Absent,
    /// 304 to a GET with If-None-Match.
    NotModified,
}

/// One key of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListEntry {
    pub key: String,
    pub etag: Option<String>,
    pub size: Option<u64>,
}

/// The S3 client. `Debug` never shows the secret key.
#[derive(Clone)]
pub struct S3Client {
    http: reqwest::Client,
    base: String,
    host: String,
    region: String,
    access_key: String,
    secret: Secret,
    timeouts: Timeouts,
    /// Send the ETag of `If-Match` on PUT without its quotes (see `with_unquoted_if_match`).
    unquoted_if_match: bool,
}

impl std::fmt::Debug for S3Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Client")
            .field("endpoint", &self.base)
            .field("region", &self.region)
            .field("access_key", &"[redacted]")
            .field("secret", &self.secret)
            .field("timeouts", &self.timeouts)
            .field("unquoted_if_match", &self.unquoted_if_match)
            .finish()
    }
}

/// The client could not be made (a bad endpoint).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("bad S3 endpoint {0:?}: expected http://host:port")]
    BadEndpoint(String),
    #[error("could not build the HTTP client: {0}")]
    Http(String),
}

/// Percent-encodes everything but RFC 3986 unreserved characters (and `/` when `keep_slash`),
/// as S3's canonical form wants, so the URL sent is the URL signed.
pub fn uri_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        let c = b as char;
        if c.is_ascii_alphanumeric()
            || matches!(c, '-' | '_' | '.' | '~')
            || (keep_slash && c == '/')
        {
            out.push(c);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

struct RawResponse {
    status: u16,
    etag: Option<String>,
    body: Vec<u8>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ListBucketResult {
    #[serde(default)]
    contents: Vec<ListContents>,
    #[serde(default)]
    is_truncated: Option<bool>,
    #[serde(default)]
    next_continuation_token: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ListContents {
    key: String,
    #[serde(rename = "ETag", default)]
    etag: Option<String>,
    #[serde(default)]
    size: Option<u64>,
}

/// Parses a ListObjectsV2 answer: (entries, next continuation token when truncated).
pub fn parse_list_body(body: &[u8]) -> Result<(Vec<ListEntry>, Option<String>), String> {
    let text = std::str::from_utf8(body).map_err(|_| "listing is not UTF-8".to_string())?;
    let r: ListBucketResult =
        quick_xml::de::from_str(text).map_err(|e| format!("unreadable listing: {e}"))?;
    let entries = r
        .contents
        .into_iter()
        .map(|c| ListEntry {
            key: c.key,
            etag: c.etag,
            size: c.size,
        })
        .collect();
    let next = if r.is_truncated.unwrap_or(false) {
        r.next_continuation_token
    } else {
        None
    };
    Ok((entries, next))
}

impl S3Client {
    /// `endpoint` is `http://host:port` (plain HTTP; path-style requests).
    pub fn new(
        endpoint: &str,
        region: &str,
        access_key: &str,
        secret: &str,
        timeouts: Timeouts,
    ) -> Result<S3Client, ClientError> {
        let url = reqwest::Url::parse(endpoint)
            .map_err(|_| ClientError::BadEndpoint(endpoint.to_string()))?;
        if url.scheme() != "http" || url.host_str().is_none() {
            return Err(ClientError::BadEndpoint(endpoint.to_string()));
        }
        let host_name = url.host_str().unwrap_or_default();
        let host = match url.port() {
            Some(p) => format!("{host_name}:{p}"),
            None => host_name.to_string(),
        };
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            // No pooled connections: a request never goes out on a connection the server may
            // already have closed, so there is nothing to re-send behind our back.
            .pool_max_idle_per_host(0)
            .connect_timeout(timeouts.connect)
            .timeout(timeouts.request)
            .no_proxy()
            .build()
            .map_err(|e| ClientError::Http(e.to_string()))?;
        Ok(S3Client {
            http,
            base: format!("http://{host}"),
            host,
            region: region.to_string(),
            access_key: access_key.to_string(),
            secret: Secret::new(secret),
            timeouts,
            unquoted_if_match: false,
        })
    }

    /// Sends the ETag of a PUT's `If-Match` without its quotes (`If-Match: abc` rather than
    /// RFC 7232's `If-Match: "abc"`). Ceph RGW 16.2 compares the header byte for byte with the
    /// ETag it stores unquoted, so a quoted ETag never matches there and every If-Match PUT is
    /// refused with 412. Off by default: the quoted form is the standard one.
    pub fn with_unquoted_if_match(mut self, unquoted: bool) -> Self {
        self.unquoted_if_match = unquoted;
        self
    }

    /// The `If-Match` header of a PUT for an ETag as the store returned it.
    fn put_if_match_value(&self, etag: &str) -> String {
        if self.unquoted_if_match {
            etag.trim_matches('"').to_string()
        } else {
            etag.to_string()
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.base
    }

    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    fn object_path(bucket: &str, key: &str) -> String {
        format!("/{}/{}", uri_encode(bucket, false), uri_encode(key, true))
    }

    /// Signs and sends one request. `Err` carries the classification of a transport failure.
    async fn send(
        &self,
        method: &str,
        path_and_query: &str,
        extra: &[(String, String)],
        body: Vec<u8>,
    ) -> Result<RawResponse, Class> {
        let url = format!("{}{}", self.base, path_and_query);
        let mut headers: Vec<(String, String)> = vec![("host".to_string(), self.host.clone())];
        headers.extend(extra.iter().cloned());
        let input = SignInput {
            method,
            url: &url,
            headers: &headers,
            body: &body,
            service: "s3",
            region: &self.region,
            time: SystemTime::now(),
            mode: SignMode::S3,
        };
        let unsent =
            |why: String| classify_transport(true, format!("refused before sending: {why}"));
        let (signed, _sig) = sign_headers(&input, &self.access_key, &self.secret)
            .map_err(|e| unsent(e.to_string()))?;
        let m = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|_| unsent(format!("bad method {method}")))?;
        let mut req = self.http.request(m, &url);
        for (k, v) in headers.iter().skip(1).chain(signed.iter()) {
            req = req.header(k.as_str(), v.as_str());
        }
        let resp = req
            .body(body)
            .send()
            .await
            .map_err(|e| classify_send_error(&e))?;
        let status = resp.status().as_u16();
        let etag = resp
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .map(|s| s.to_string());
        let body = match resp.bytes().await {
            Ok(b) => b.to_vec(),
            Err(e) => {
                // The status is known; only the body broke. For 2xx the operation's effect is
                // decided, but a GET's value is not: callers see Info for reads.
                let why = format!("HTTP {status}, then the body broke: {}", error_chain(&e));
                return Err(classify_transport(false, why));
            }
        };
        Ok(RawResponse { status, etag, body })
    }

    fn finish<T>(
        &self,
        op: OpKind,
        r: Result<RawResponse, Class>,
        value: impl FnOnce(&RawResponse) -> Result<T, String>,
    ) -> S3Reply<T> {
        match r {
            Err(Class::Fail(reason)) => S3Reply {
                status: None,
                error_code: None,
                outcome: S3Outcome::Fail(reason),
            },
            Err(Class::Info(reason)) => S3Reply {
                status: None,
                error_code: None,
                outcome: S3Outcome::Info(reason),
            },
            Err(Class::Ok) => S3Reply {
                status: None,
                error_code: None,
                outcome: S3Outcome::Info("no answer".into()),
            },
            Ok(raw) => {
                let err = if (200..300).contains(&raw.status) {
                    Default::default()
                } else {
                    parse_error_body(&raw.body)
                };
                let outcome = match classify(op, raw.status, err.code.as_deref()) {
                    Class::Ok => match value(&raw) {
                        Ok(v) => S3Outcome::Ok(v),
                        // A 2xx whose body we cannot read: the effect happened (for writes)
                        // but the value is unknown.
                        Err(e) => S3Outcome::Info(e),
                    },
                    Class::Fail(r) => S3Outcome::Fail(r),
                    Class::Info(r) => S3Outcome::Info(r),
                };
                S3Reply {
                    status: Some(raw.status),
                    error_code: err.code,
                    outcome,
                }
            }
        }
    }

    /// GET an object (optionally conditional). 404 NoSuchKey is `Ok(Absent)`.
    pub async fn get(&self, bucket: &str, key: &str, cond: &GetCondition) -> S3Reply<GetResult> {
        let mut extra = Vec::new();
        if let Some(e) = &cond.if_match {
            extra.push(("if-match".to_string(), e.clone()));
        }
        if let Some(e) = &cond.if_none_match {
            extra.push(("if-none-match".to_string(), e.clone()));
        }
        let r = self
            .send("GET", &Self::object_path(bucket, key), &extra, Vec::new())
            .await;
        self.finish(OpKind::Get, r, |raw| {
            Ok(match raw.status {
                304 => GetResult::NotModified,
                404 => GetResult::Absent,
                _ => GetResult::Found(Object {
                    body: raw.body.clone(),
                    etag: raw.etag.clone(),
                }),
            })
        })
    }

    /// PUT an object; `Ok` carries the new ETag when the store sent one.
    pub async fn put(
        &self,
        bucket: &str,
        key: &str,
        body: Vec<u8>,
        cond: &PutCondition,
    ) -> S3Reply<Option<String>> {
        let (op, extra) = match cond {
            PutCondition::None => (OpKind::Put, vec![]),
            PutCondition::IfNoneMatchAny => (
                OpKind::PutIfNoneMatch,
                vec![("if-none-match".to_string(), "*".to_string())],
            ),
            PutCondition::IfMatch(e) => (
                OpKind::PutIfMatch,
                vec![("if-match".to_string(), self.put_if_match_value(e))],
            ),
        };
        let r = self
            .send("PUT", &Self::object_path(bucket, key), &extra, body)
            .await;
        self.finish(op, r, |raw| Ok(raw.etag.clone()))
    }

    /// DELETE an object (a missing key is `Ok`).
    pub async fn delete(&self, bucket: &str, key: &str) -> S3Reply<()> {
        let r = self
            .send("DELETE", &Self::object_path(bucket, key), &[], Vec::new())
            .await;
        self.finish(OpKind::Delete, r, |_| Ok(()))
    }

    /// ListObjectsV2 with a prefix, following continuation tokens; keys in the store's order
    /// (ascending).
    pub async fn list(&self, bucket: &str, prefix: &str) -> S3Reply<Vec<ListEntry>> {
        let mut all = Vec::new();
        let mut token: Option<String> = None;
        for _page in 0..10_000 {
            let mut q = format!("list-type=2&prefix={}", uri_encode(prefix, false));
            if let Some(t) = &token {
                q = format!("continuation-token={}&{q}", uri_encode(t, false));
            }
            let path = format!("/{}?{q}", uri_encode(bucket, false));
            let r = self.send("GET", &path, &[], Vec::new()).await;
            let reply = self.finish(OpKind::List, r, |raw| parse_list_body(&raw.body));
            match reply.outcome {
                S3Outcome::Ok((entries, next)) => {
                    all.extend(entries);
                    match next {
                        Some(t) => token = Some(t),
                        None => {
                            return S3Reply {
                                status: reply.status,
                                error_code: None,
                                outcome: S3Outcome::Ok(all),
                            }
                        }
                    }
                }
                S3Outcome::Fail(r) => {
                    return S3Reply {
                        status: reply.status,
                        error_code: reply.error_code,
                        outcome: S3Outcome::Fail(r),
                    }
                }
                S3Outcome::Info(r) => {
                    return S3Reply {
                        status: reply.status,
                        error_code: reply.error_code,
                        outcome: S3Outcome::Info(r),
                    }
                }
            }
        }
        S3Reply {
            status: None,
            error_code: None,
            outcome: S3Outcome::Info("listing did not end after 10000 pages".into()),
        }
    }

    /// Creates a bucket (already owned by us is `Ok`).
    pub async fn create_bucket(&self, bucket: &str) -> S3Reply<()> {
        let path = format!("/{}", uri_encode(bucket, false));
        let r = self.send("PUT", &path, &[], Vec::new()).await;
        self.finish(OpKind::CreateBucket, r, |_| Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_secret() {
        let c = S3Client::new(
            "http://127.0.0.1:9",
            "us-east-1",
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            Timeouts::default(),
        )
        .unwrap();
        let d = format!("{c:?}");
        assert!(!d.contains("wJalr"), "{d}");
        assert!(!d.contains("AKIDEXAMPLE"), "{d}");
    }

    #[test]
    fn if_match_quotes() {
        let c = S3Client::new("http://127.0.0.1:9", "r", "a", "s", Timeouts::default()).unwrap();
        assert_eq!(c.put_if_match_value("\"abc\""), "\"abc\"");
        let c = c.with_unquoted_if_match(true);
        assert_eq!(c.put_if_match_value("\"abc\""), "abc");
        assert_eq!(c.put_if_match_value("abc"), "abc");
    }

    #[test]
    fn bad_endpoints_are_errors() {
        for e in ["", "localhost:9000", "https://x", "http://", "ftp://a"] {
            assert!(
                S3Client::new(e, "r", "a", "s", Timeouts::default()).is_err(),
                "{e}"
            );
        }
    }

    #[test]
    fn encoding() {
        assert_eq!(uri_encode("a b/c~d+e", true), "a%20b/c~d%2Be");
        assert_eq!(uri_encode("a/b", false), "a%2Fb");
    }

    #[test]
    fn list_bodies() {
        let b = br#"<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>fence__</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>tok/1</NextContinuationToken><Contents><Key>fence__1</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified><ETag>&quot;abc&quot;</ETag><Size>12</Size><StorageClass>STANDARD</StorageClass></Contents><Contents><Key>fence__2</Key><ETag>"def"</ETag><Size>3</Size></Contents></ListBucketResult>"#;
        let (e, next) = parse_list_body(b).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].key, "fence__1");
        assert_eq!(e[0].etag.as_deref(), Some("\"abc\""));
        assert_eq!(e[1].size, Some(3));
        assert_eq!(next.as_deref(), Some("tok/1"));
        let empty = br#"<ListBucketResult><Name>b</Name><IsTruncated>false</IsTruncated></ListBucketResult>"#;
        assert_eq!(parse_list_body(empty).unwrap(), (vec![], None));
        assert!(parse_list_body(b"<nope").is_err());
    }

    #[tokio::test]
    async fn connection_refused_is_fail() {
        // Port 9 (discard) on loopback: nothing listens there in a test environment.
        let c = S3Client::new(
            "http://127.0.0.1:9",
            "us-east-1",
            "a",
            "s",
            Timeouts::default(),
        )
        .unwrap();
        let r = c.put("b", "k", b"x".to_vec(), &PutCondition::None).await;
        assert!(r.outcome.is_fail(), "{r:?}");
        assert_eq!(r.status, None);
    }
}
