//! The small object-store interface the probe and the fencing workload need, implemented by a
//! bucket of a real S3 store and by an in-process store.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;

use crate::client::{GetCondition, GetResult, Object, PutCondition, S3Client};
use crate::outcome::S3Outcome;

/// Keys, objects and conditional writes: what the fencing protocol relies on.
pub trait ObjectStore: Send + Sync {
    /// `Ok(None)` when the key does not exist.
    fn get(&self, key: &str) -> impl Future<Output = S3Outcome<Option<Object>>> + Send;
    /// `Ok(etag)`: the new ETag when the store sent one.
    fn put(
        &self,
        key: &str,
        body: Vec<u8>,
        cond: PutCondition,
    ) -> impl Future<Output = S3Outcome<Option<String>>> + Send;
    fn delete(&self, key: &str) -> impl Future<Output = S3Outcome<()>> + Send;
    /// Keys under `prefix`, ascending.
    fn list(&self, prefix: &str) -> impl Future<Output = S3Outcome<Vec<String>>> + Send;
}

/// One bucket of a real store.
#[derive(Clone, Debug)]
pub struct BucketStore {
    pub client: S3Client,
    pub bucket: String,
}

impl ObjectStore for BucketStore {
    async fn get(&self, key: &str) -> S3Outcome<Option<Object>> {
        self.client
            .get(&self.bucket, key, &GetCondition::default())
            .await
            .outcome
            .map(|g| match g {
                GetResult::Found(o) => Some(o),
                GetResult::Absent | GetResult::NotModified => None,
            })
    }
    async fn put(&self, key: &str, body: Vec<u8>, cond: PutCondition) -> S3Outcome<Option<String>> {
        self.client
            .put(&self.bucket, key, body, &cond)
            .await
            .outcome
    }
    async fn delete(&self, key: &str) -> S3Outcome<()> {
        self.client.delete(&self.bucket, key).await.outcome
    }
    async fn list(&self, prefix: &str) -> S3Outcome<Vec<String>> {
        self.client
            .list(&self.bucket, prefix)
            .await
            .outcome
            .map(|v| v.into_iter().map(|e| e.key).collect())
    }
}

/// An in-process store. With `enforce_preconditions: false` it ignores If-Match and
/// If-None-Match on PUT, as some real stores do.
#[derive(Debug, Default)]
pub struct MemStore {
    pub enforce_preconditions: bool,
    inner: Mutex<MemInner>,
}

#[derive(Debug, Default)]
struct MemInner {
    objects: BTreeMap<String, (Vec<u8>, String)>,
    next_version: u64,
    /// Keys (by prefix) whose next applied PUT answers `Info` instead of `Ok`: a lost reply.
    lose_reply: Vec<String>,
}

impl MemStore {
    pub fn new(enforce_preconditions: bool) -> MemStore {
        MemStore {
            enforce_preconditions,
            inner: Mutex::new(MemInner::default()),
        }
    }

    /// The next PUT to a key starting with `prefix` is applied (if its condition holds) but
    /// answered with `Info`, as when the reply is lost.
    pub fn lose_next_reply(&self, prefix: &str) {
        self.lock().lose_reply.push(prefix.to_string());
    }

    /// Every key, ascending.
    pub fn keys(&self) -> Vec<String> {
        self.lock().objects.keys().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemInner> {
        // A panic while holding the lock cannot leave the map half-changed: recover.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ObjectStore for MemStore {
    async fn get(&self, key: &str) -> S3Outcome<Option<Object>> {
        tokio::task::yield_now().await;
        let g = self.lock();
        S3Outcome::Ok(g.objects.get(key).map(|(b, e)| Object {
            body: b.clone(),
            etag: Some(e.clone()),
        }))
    }

    async fn put(&self, key: &str, body: Vec<u8>, cond: PutCondition) -> S3Outcome<Option<String>> {
        tokio::task::yield_now().await;
        let mut g = self.lock();
        if self.enforce_preconditions {
            match (&cond, g.objects.get(key)) {
                (PutCondition::IfNoneMatchAny, Some(_)) => {
                    return S3Outcome::Fail("precondition failed (HTTP 412)".into())
                }
                (PutCondition::IfMatch(_), None) => {
                    return S3Outcome::Fail("precondition failed: no such key (HTTP 404)".into())
                }
                (PutCondition::IfMatch(e), Some((_, cur))) if e != cur => {
                    return S3Outcome::Fail("precondition failed (HTTP 412)".into())
                }
                _ => {}
            }
        }
        g.next_version += 1;
        let etag = format!("\"v{}\"", g.next_version);
        g.objects.insert(key.to_string(), (body, etag.clone()));
        if let Some(i) = g
            .lose_reply
            .iter()
            .position(|p| key.starts_with(p.as_str()))
        {
            g.lose_reply.remove(i);
            return S3Outcome::Info("reply lost (injected)".into());
        }
        S3Outcome::Ok(Some(etag))
    }

    async fn delete(&self, key: &str) -> S3Outcome<()> {
        tokio::task::yield_now().await;
        self.lock().objects.remove(key);
        S3Outcome::Ok(())
    }

    async fn list(&self, prefix: &str) -> S3Outcome<Vec<String>> {
        tokio::task::yield_now().await;
        let g = self.lock();
        S3Outcome::Ok(
            g.objects
                .range(prefix.to_string()..)
                .take_while(|(k, _)| k.starts_with(prefix))
                .map(|(k, _)| k.clone())
                .collect(),
        )
    }
}
