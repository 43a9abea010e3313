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
    let inconclusive = |steps: Vec<String>, what: &str| ProbeResult {
        enforced: false,
        sentence: format!("could not tell whether the store enforces conditional writes: {what}"),
        steps,
    };

    let first = store
        .put(&key, b"probe-1".to_vec(), PutCondition::None)
        .await;
    steps.push(format!("PUT {key} (unconditional): {}", describe(&first)));
    let S3Outcome::Ok(first_etag) = first else {
        return inconclusive(steps, "the first, unconditional write was not accepted");
    };
    // The current ETag: from the PUT answer, else read it.
    let etag = match first_etag {
        Some(e) => e,
        None => match store.get(&key).await {
            S3Outcome::Ok(Some(o)) => match o.etag {
                Some(e) => e,
                None => return inconclusive(steps, "the store sends no ETag"),
            },
            other => {
                steps.push(format!("GET {key}: {}", describe(&other)));
                return inconclusive(steps, "the probe object could not be read back");
            }
        },
    };

    let inm = store
        .put(&key, b"probe-2".to_vec(), PutCondition::IfNoneMatchAny)
        .await;
    steps.push(format!(
        "PUT {key} with If-None-Match: * on the existing key: {}",
        describe(&inm)
    ));
    // If the store accepted it, the ETag changed: read it for the next steps.
    let mut current = etag.clone();
    if inm.is_ok() || inm.is_info() {
        if let S3Outcome::Ok(Some(o)) = store.get(&key).await {
            if let Some(e) = o.etag {
                current = e;
            }
        }
    }

    let wrong = "\"00000000000000000000000000000000\"".to_string();
    let wrong = if wrong == current {
        "\"11111111111111111111111111111111\"".to_string()
    } else {
        wrong
    };
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
    if im_wrong.is_ok() || im_wrong.is_info() {
        if let S3Outcome::Ok(Some(o)) = store.get(&key).await {
            if let Some(e) = o.etag {
                current = e;
            }
        }
    }

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
                describe(&im_right)
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
