//! SigV4 signing of one request (aws-sigv4 does the cryptography; this module fixes the
//! settings and turns the result into headers to add).

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    sign, PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest,
    SignatureLocation, SigningSettings, UriPathNormalizationMode,
};
use aws_sigv4::sign::v4;

/// How a request is signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignMode {
    /// S3's rules: the payload hash goes in `x-amz-content-sha256` (and is signed), the path is
    /// encoded once and never normalized (keys may contain `//` or `..`).
    S3,
    /// The generic rules of the published SigV4 test suite: double-encoded, normalized path;
    /// `sign_body` adds the signed `x-amz-content-sha256` header.
    Generic { sign_body: bool },
}

/// The secret half of a key pair. Never printed: `Debug` says `[redacted]`.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Signing failed before anything was sent (an unparsable URL, a header that is not text).
#[derive(Debug, thiserror::Error)]
#[error("could not sign the request: {0}")]
pub struct SignError(String);

/// The inputs of one signature.
pub struct SignInput<'a> {
    pub method: &'a str,
    /// Absolute URL, already percent-encoded as it will be sent.
    pub url: &'a str,
    /// Headers that will be sent (and signed), `host` included.
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
    pub service: &'a str,
    pub region: &'a str,
    pub time: SystemTime,
    pub mode: SignMode,
}

/// Signs and returns the headers to add (`x-amz-date`, `x-amz-content-sha256` when the mode
/// signs the payload, `authorization`) and the signature.
pub fn sign_headers(
    input: &SignInput<'_>,
    access_key: &str,
    secret: &Secret,
) -> Result<(Vec<(String, String)>, String), SignError> {
    let creds = Credentials::new(access_key, secret.expose(), None, None, "chaos-s3");
    let identity = creds.into();
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::Headers;
    match input.mode {
        SignMode::S3 => {
            settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
            settings.percent_encoding_mode = PercentEncodingMode::Single;
            settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
        }
        SignMode::Generic { sign_body } => {
            settings.payload_checksum_kind = if sign_body {
                PayloadChecksumKind::XAmzSha256
            } else {
                PayloadChecksumKind::NoHeader
            };
            settings.percent_encoding_mode = PercentEncodingMode::Double;
            settings.uri_path_normalization_mode = UriPathNormalizationMode::Enabled;
        }
    }
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(input.region)
        .name(input.service)
        .time(input.time)
        .settings(settings)
        .build()
        .map_err(|e| SignError(e.to_string()))?
        .into();
    let signable = SignableRequest::new(
        input.method,
        input.url,
        input.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        SignableBody::Bytes(input.body),
    )
    .map_err(|e| SignError(e.to_string()))?;
    let (instructions, signature) = sign(signable, &params)
        .map_err(|e| SignError(e.to_string()))?
        .into_parts();
    let (headers, _params) = instructions.into_parts();
    let out = headers
        .into_iter()
        .map(|h| (h.name().to_string(), h.value().to_string()))
        .collect();
    Ok((out, signature))
}

/// Lower-case hex SHA-256 of a payload (what `x-amz-content-sha256` carries).
pub fn payload_sha256(body: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_debug_is_redacted() {
        let s = Secret::new("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
        assert_eq!(format!("{s:?}"), "[redacted]");
    }

    #[test]
    fn empty_payload_hash() {
        assert_eq!(
            payload_sha256(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
