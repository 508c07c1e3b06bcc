//! Object storage through the `object_store` crate: `s3://bucket/prefix` (AWS or any
//! S3-compatible server, `--remote-endpoint`), `az://container/prefix`,
//! `file:///dir` and `memory://` (tests). Credentials, regions and accounts come from the crate's
//! standard environment variables (`AWS_*`, `AZURE_*`). Requests are
//! retried with back-off by the crate, for a bounded time, so a stopped server is an error after
//! seconds, not a hang.

use std::future::Future;
use std::ops::Range;
use std::sync::mpsc::sync_channel;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use futures::channel::oneshot;
use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientConfigKey, ObjectStore, RetryConfig};

use super::{ObjectInfo, PendingRead, ReadAhead, Store};
use crate::error::{Error, Result};

/// How to reach a remote store, and how to read it, from the shared `--remote-*` flags.
#[derive(Debug, Clone, Default)]
pub struct RemoteOptions {
    /// An S3-compatible server's URL (`http://` allowed for it).
    pub endpoint: Option<String>,
    pub read_ahead: ReadAhead,
}

pub struct Remote {
    /// The URL as given, without a trailing `/`: what messages name objects by.
    url: String,
    prefix: String,
    store: Arc<dyn ObjectStore>,
    read_ahead: ReadAhead,
    runtime: Arc<tokio::runtime::Runtime>,
    /// The thread that drives the runtime, and what ends it when dropped.
    driver: Option<(oneshot::Sender<()>, JoinHandle<()>)>,
}

/// Retries of a failed request: a few, backing off from 100 ms, given up after 15 s overall.
fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: 4,
        retry_timeout: Duration::from_secs(15),
    }
}

/// Timeouts, set as config keys: `with_client_options` would replace what `from_env` read from
/// the environment (`AWS_ALLOW_HTTP`, `GOOGLE_PROXY_URL`, …).
const TIMEOUTS: [(ClientConfigKey, &str); 2] = [
    (ClientConfigKey::ConnectTimeout, "5s"),
    (ClientConfigKey::Timeout, "30s"),
];

impl Remote {
    pub fn open(location: &str, options: &RemoteOptions) -> Result<Self> {
        let bad = |m: String| Error::invalid(std::path::Path::new(location), m);
        let url = url::Url::parse(location).map_err(|e| bad(format!("not a URL: {e}")))?;
        let prefix = url.path().trim_matches('/').to_string();
        let store: Arc<dyn ObjectStore> = match url.scheme() {
            "s3" | "s3a" => {
                use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
                let mut b = TIMEOUTS.iter().fold(
                    AmazonS3Builder::from_env().with_url(location),
                    |b, (k, v)| b.with_config(AmazonS3ConfigKey::Client(*k), *v),
                );
                b = b.with_retry(retry());
                if let Some(e) = &options.endpoint {
                    b = b
                        .with_endpoint(e)
                        .with_allow_http(e.starts_with("http://"))
                        // S3-compatible servers answer on one host: path-style requests.
                        .with_virtual_hosted_style_request(false);
                }
                Arc::new(b.build().map_err(|e| bad(error_text(&e)))?)
            }
            "az" | "azure" | "abfs" | "abfss" => {
                use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
                let b = TIMEOUTS.iter().fold(
                    MicrosoftAzureBuilder::from_env().with_url(location),
                    |b, (k, v)| b.with_config(AzureConfigKey::Client(*k), *v),
                );
                Arc::new(
                    b.with_retry(retry())
                        .build()
                        .map_err(|e| bad(error_text(&e)))?,
                )
            }
            "file" => {
                let root = url
                    .to_file_path()
                    .map_err(|()| bad("not a local path".into()))?;
                if !root.is_dir() {
                    return Err(bad("no such directory".into()));
                }
                Arc::new(
                    object_store::local::LocalFileSystem::new_with_prefix(&root)
                        .map_err(|e| bad(error_text(&e)))?,
                )
            }
            "memory" => Arc::new(object_store::memory::InMemory::new()),
            s => {
                return Err(bad(format!(
                    "the scheme {s}:// is not supported (s3://, az://, file://, memory://)"
                )))
            }
        };
        // The prefix is part of a file:// store's root already.
        let prefix = if url.scheme() == "file" {
            String::new()
        } else {
            prefix
        };
        // One thread of its own: the requests in flight are concurrent on it, and they go on
        // while kseg works on the bytes that have arrived.
        let io = |e| Error::io(std::path::Path::new(location), e);
        let runtime = Arc::new(
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(io)?,
        );
        let (stop, stopped) = oneshot::channel::<()>();
        let driven = Arc::clone(&runtime);
        let thread = std::thread::Builder::new()
            .name("kseg-store".into())
            .spawn(move || {
                // Ends when the sender is dropped, with the store.
                let _ = driven.block_on(stopped);
            })
            .map_err(io)?;
        Ok(Remote {
            url: location.trim_end_matches('/').to_string(),
            prefix,
            store,
            read_ahead: options.read_ahead,
            runtime,
            driver: Some((stop, thread)),
        })
    }

    /// A store over `store`: an in-memory one the tests fill.
    #[cfg(test)]
    pub fn over(url: &str, store: Arc<dyn ObjectStore>, read_ahead: ReadAhead) -> Result<Self> {
        let options = RemoteOptions {
            endpoint: None,
            read_ahead,
        };
        let mut r = Remote::open("memory://", &options)?;
        r.url = url.trim_end_matches('/').to_string();
        r.store = store;
        Ok(r)
    }

    fn location(&self, key: &str) -> ObjectPath {
        if self.prefix.is_empty() {
            ObjectPath::from(key)
        } else {
            ObjectPath::from(format!("{}/{key}", self.prefix))
        }
    }

    fn fail(&self, key: &str, e: object_store::Error) -> Error {
        failed(&self.name(key), e)
    }

    /// Runs `task` on the runtime's thread and waits for its answer.
    fn run<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> T {
        let (tx, rx) = sync_channel(1);
        self.runtime.spawn(async move {
            let _ = tx.send(task.await);
        });
        rx.recv()
            .expect("the store's runtime runs its tasks to the end while the store is open")
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        if let Some((stop, thread)) = self.driver.take() {
            drop(stop);
            let _ = thread.join();
        }
    }
}

/// The error for a failed request about the object `name`.
fn failed(name: &str, e: object_store::Error) -> Error {
    let message = match e {
        object_store::Error::NotFound { .. } => "no such object".to_string(),
        e => error_text(&e),
    };
    Error::invalid(std::path::Path::new(name), message)
}

/// An error with its causes: object_store's own message is often only "Generic S3 error".
fn error_text(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

impl Store for Remote {
    fn name(&self, key: &str) -> String {
        format!("{}/{key}", self.url)
    }

    fn len(&self, key: &str) -> Result<u64> {
        let (store, loc) = (Arc::clone(&self.store), self.location(key));
        self.run(async move { store.head(&loc).await })
            .map(|m| m.size)
            .map_err(|e| self.fail(key, e))
    }

    fn start_read(&self, key: &str, range: Range<u64>) -> PendingRead {
        let name = self.name(key);
        let (tx, rx) = sync_channel(1);
        let (store, loc, failed_name) = (Arc::clone(&self.store), self.location(key), name.clone());
        let task = self.runtime.spawn(async move {
            let got = if range.is_empty() {
                // An empty range is no valid request.
                Ok(Vec::new())
            } else {
                store
                    .get_range(&loc, range)
                    .await
                    .map(Vec::from)
                    .map_err(|e| failed(&failed_name, e))
            };
            let _ = tx.send(got);
        });
        PendingRead::task(name, rx, task.abort_handle())
    }

    fn read_ahead(&self) -> ReadAhead {
        self.read_ahead
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>> {
        let root = self.location("");
        let (store, under) = (Arc::clone(&self.store), self.location(prefix));
        let listed: Vec<_> = self
            .run(async move { store.list(Some(&under)).try_collect::<Vec<_>>().await })
            .map_err(|e| self.fail(prefix, e))?;
        let mut out: Vec<ObjectInfo> = listed
            .into_iter()
            .map(|m| {
                let key = m.location.as_ref();
                let key = key
                    .strip_prefix(root.as_ref())
                    .unwrap_or(key)
                    .trim_start_matches('/');
                ObjectInfo {
                    key: key.to_string(),
                    size: m.size,
                }
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
        let (store, loc) = (Arc::clone(&self.store), self.location(key));
        self.run(async move { store.put(&loc, bytes.into()).await })
            .map(|_| ())
            .map_err(|e| self.fail(key, e))
    }
}
