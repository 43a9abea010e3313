//! Does the store enforce conditional writes? Asked before a workload that relies on them.

use crate::client::PutCondition;
use crate::outcome::S3Outcome;
use crate::store::ObjectStore;

/// What the probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeResult {
    /// Both conditions were refused as they must be (and a correct If-Match was accepted).
    pub enforced: bool,
    /// One sentence for the report: what was tried and what the store answered.
    pub sentence: String,
    /// The answers, one line per step.
    pub steps: Vec<String>,
}

fn describe<T>(o: &S3Outcome<T>) -> String {
    match o {
        S3Outcome::Ok(_) => "accepted".to_string(),
        S3Outcome::Fail(r) => format!("refused: {r}"),
        S3Outcome::Info(r) => format!("unknown: {r}"),
    }
}

/// Writes `<key_prefix>probe` once, then tries If-None-Match: * on it (must be refused),
/// If-Match with a wrong ETag (must be refused) and If-Match with the current ETag (must be
/// accepted), and deletes it. Never panics; an unreachable store gives `enforced: false` with
/// a sentence that says the probe could not decide.
pub async fn probe_conditional_writes<S: ObjectStore>(store: &S, key_prefix: &str) -> ProbeResult {
    let key = format!("{key_prefix}probe");
    let mut steps = Vec::new();
    let mut current = match first_write(store, &key, &mut steps).await {
        Ok(etag) => etag,
        Err(what) => return inconclusive(steps, what),
    };

    let inm = store
        .put(&key, b"probe-2".to_vec(), PutCondition::IfNoneMatchAny)
        .await;
    steps.push(format!(
        "PUT {key} with If-None-Match: * on the existing key: {}",
        describe(&inm)
    ));
    reread_etag_if_written(store, &key, &inm, &mut current).await;

    let wrong = wrong_etag(&current);
    let im_wrong = store
        .put(
            &key,
            b"probe-3".to_vec(),
            PutCondition::IfMatch(wrong.clone()),
        )
        .await;
    steps.push(format!(
        "PUT {key} with If-Match: {wrong} (not the current ETag): {}",
        describe(&im_wrong)
    ));
    reread_etag_if_written(store, &key, &im_wrong, &mut current).await;

    let im_right = store
        .put(
            &key,
            b"probe-4".to_vec(),
            PutCondition::IfMatch(current.clone()),
        )
        .await;
    steps.push(format!(
        "PUT {key} with If-Match: {current} (the current ETag): {}",
        describe(&im_right)
    ));
    let del = store.delete(&key).await;
    steps.push(format!("DELETE {key}: {}", describe(&del)));

    judge(&inm, &im_wrong, &im_right, steps)
}

/// The probe could not decide: `what` says why.
fn inconclusive(steps: Vec<String>, what: &str) -> ProbeResult {
    ProbeResult {
        enforced: false,
        sentence: format!("could not tell whether the store enforces conditional writes: {what}"),
        steps,
    }
}

/// The unconditional first write; returns the current ETag (from its answer, else read back),
/// or why the probe cannot go on.
async fn first_write<S: ObjectStore>(
    store: &S,
    key: &str,
    steps: &mut Vec<String>,
) -> Result<String, &'static str> {
    let first = store
        .put(key, b"probe-1".to_vec(), PutCondition::None)
        .await;
    steps.push(format!("PUT {key} (unconditional): {}", describe(&first)));
    let S3Outcome::Ok(first_etag) = first else {
        return Err("the first, unconditional write was not accepted");
    };
    match first_etag {
        Some(e) => Ok(e),
        None => match store.get(key).await {
            S3Outcome::Ok(Some(o)) => match o.etag {
                Some(e) => Ok(e),
                None => Err("the store sends no ETag"),
            },
            other => {
                steps.push(format!("GET {key}: {}", describe(&other)));
                Err("the probe object could not be read back")
            }
        },
    }
}

/// If a conditional write was (or may have been) accepted, the ETag changed: read it for the
/// next steps.
async fn reread_etag_if_written<S: ObjectStore, T>(
    store: &S,
    key: &str,
    answer: &S3Outcome<T>,
    current: &mut String,
) {
    if answer.is_ok() || answer.is_info() {
        if let S3Outcome::Ok(Some(o)) = store.get(key).await {
            if let Some(e) = o.etag {
                *current = e;
            }
        }
    }
}

/// An ETag that is certainly not the current one.
fn wrong_etag(current: &str) -> String {
    let wrong = "\"00000000000000000000000000000000\"".to_string();
    if wrong == current {
        "\"11111111111111111111111111111111\"".to_string()
    } else {
        wrong
    }
}

/// The verdict from the three conditional writes: both wrong conditions refused and the right
/// one accepted.
fn judge<T, U, V>(
    inm: &S3Outcome<T>,
    im_wrong: &S3Outcome<U>,
    im_right: &S3Outcome<V>,
    steps: Vec<String>,
) -> ProbeResult {
    let mut ignored = Vec::new();
    if inm.is_ok() {
        ignored.push("If-None-Match: * on an existing key was accepted");
    }
    if im_wrong.is_ok() {
        ignored.push("If-Match with a wrong ETag was accepted");
    }
    if !ignored.is_empty() {
        return ProbeResult {
            enforced: false,
            sentence: format!(
                "the store does not enforce conditional writes: {}; a workload that relies on \
                 them cannot be checked on this store",
                ignored.join(" and ")
            ),
            steps,
        };
    }
    if inm.is_info() || im_wrong.is_info() {
        return inconclusive(steps, "a conditional write had an unknown outcome");
    }
    if !im_right.is_ok() {
        return ProbeResult {
            enforced: false,
            sentence: format!(
                "the store refuses conditional writes even when the condition holds (If-Match \
                 with the current ETag: {})",
                describe(im_right)
            ),
            steps,
        };
    }
    ProbeResult {
        enforced: true,
        sentence: "the store enforces conditional writes: If-None-Match: * on an existing key \
                   and If-Match with a wrong ETag were refused, If-Match with the current ETag \
                   was accepted"
            .to_string(),
        steps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemStore;

    #[tokio::test]
    async fn enforced_store_passes() {
        let s = MemStore::new(true);
        let r = probe_conditional_writes(&s, "chaos/").await;
        assert!(r.enforced, "{r:?}");
        assert!(
            s.keys().is_empty(),
            "probe object left behind: {:?}",
            s.keys()
        );
    }

    #[tokio::test]
    async fn ignoring_store_fails_with_the_sentence() {
        let s = MemStore::new(false);
        let r = probe_conditional_writes(&s, "chaos/").await;
        assert!(!r.enforced);
        assert!(
            r.sentence
                .contains("If-None-Match: * on an existing key was accepted"),
            "{}",
            r.sentence
        );
        assert!(
            r.sentence
                .contains("If-Match with a wrong ETag was accepted"),
            "{}",
            r.sentence
        );
    }
}
