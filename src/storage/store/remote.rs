//! Object storage through the `object_store` crate: `s3://bucket/prefix` (AWS or any
//! S3-compatible server, `--remote-endpoint`), `file:///dir` and `memory://` (tests). Credentials
//! and regions come from the crate's standard environment variables (`AWS_*`). Requests are
//! retried with back-off by the crate, for a bounded time, so a stopped server is an error after
//! seconds, not a hang.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};

use super::{ObjectInfo, Store};
use crate::error::{Error, Result};

/// How to reach a remote store, from the shared `--remote-*` flags.
#[derive(Debug, Clone, Default)]
pub struct RemoteOptions {
    /// An S3-compatible server's URL (`http://` allowed for it).
    pub endpoint: Option<String>,
}

pub struct Remote {
    /// The URL as given, without a trailing `/`: what messages name objects by.
    url: String,
    prefix: String,
    store: Arc<dyn ObjectStore>,
    runtime: tokio::runtime::Runtime,
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

fn client() -> ClientOptions {
    ClientOptions::new()
        .with_connect_timeout(Duration::from_secs(5))
        .with_timeout(Duration::from_secs(30))
}

impl Remote {
    pub fn open(location: &str, options: &RemoteOptions) -> Result<Self> {
        let bad = |m: String| Error::invalid(std::path::Path::new(location), m);
        let url = url::Url::parse(location).map_err(|e| bad(format!("not a URL: {e}")))?;
        let prefix = url.path().trim_matches('/').to_string();
        let store: Arc<dyn ObjectStore> = match url.scheme() {
            "s3" | "s3a" => {
                // `with_client_options` replaces the client options `from_env` read: the one
                // among them the documentation names, `AWS_ALLOW_HTTP`, is set again.
                let env_http = std::env::var("AWS_ALLOW_HTTP").is_ok_and(|v| v == "true");
                let mut b = object_store::aws::AmazonS3Builder::from_env()
                    .with_url(location)
                    .with_retry(retry())
                    .with_client_options(client())
                    .with_allow_http(env_http);
                if let Some(e) = &options.endpoint {
                    b = b
                        .with_endpoint(e)
                        .with_allow_http(e.starts_with("http://"))
                        // S3-compatible servers answer on one host: path-style requests.
                        .with_virtual_hosted_style_request(false);
                }
                Arc::new(b.build().map_err(|e| bad(error_text(&e)))?)
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
                    "the scheme {s}:// is not supported (s3://, file://, memory://)"
                )))
            }
        };
        // The prefix is part of a file:// store's root already.
        let prefix = if url.scheme() == "file" {
            String::new()
        } else {
            prefix
        };
        // One thread: the requests in flight are concurrent on it, and the rest of kseg only
        // waits for them.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io(std::path::Path::new(location), e))?;
        Ok(Remote {
            url: location.trim_end_matches('/').to_string(),
            prefix,
            store,
            runtime,
        })
    }

    /// A store over `store`: an in-memory one the tests fill.
    #[cfg(test)]
    pub fn over(url: &str, store: Arc<dyn ObjectStore>) -> Result<Self> {
        let mut r = Remote::open("memory://", &RemoteOptions::default())?;
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
        let message = match e {
            object_store::Error::NotFound { .. } => "no such object".to_string(),
            e => error_text(&e),
        };
        Error::invalid(std::path::Path::new(&self.name(key)), message)
    }
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
        let loc = self.location(key);
        self.runtime
            .block_on(self.store.head(&loc))
            .map(|m| m.size)
            .map_err(|e| self.fail(key, e))
    }

    fn read_ranges(&self, key: &str, ranges: &[Range<u64>]) -> Result<Vec<Vec<u8>>> {
        let loc = self.location(key);
        let gets = ranges.iter().map(|r| {
            let store = Arc::clone(&self.store);
            let loc = loc.clone();
            let r = r.clone();
            // Spawned, so the ranges are fetched concurrently.
            self.runtime
                .spawn(async move { store.get_range(&loc, r).await })
        });
        let handles: Vec<_> = gets.collect();
        let got = self
            .runtime
            .block_on(futures::future::try_join_all(handles))
            .map_err(|e| Error::invalid(&self.path_of(key), e.to_string()))?;
        got.into_iter()
            .map(|b| b.map(|b| b.to_vec()).map_err(|e| self.fail(key, e)))
            .collect()
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>> {
        let root = self.location("");
        let under = self.location(prefix);
        let listed: Vec<_> = self
            .runtime
            .block_on(self.store.list(Some(&under)).try_collect())
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
        let loc = self.location(key);
        self.runtime
            .block_on(self.store.put(&loc, bytes.into()))
            .map(|_| ())
            .map_err(|e| self.fail(key, e))
    }
}
