//! Object storage through the `object_store` crate: `s3://bucket/prefix` (AWS or any
//! S3-compatible server, `--remote-endpoint`), `gs://bucket/prefix` (Google Cloud Storage, or a
//! GCS-compatible server without OAuth, `--remote-endpoint`), `az://container/prefix`,
//! and `memory://` (tests; a `file://` tree is [`super::Local`]'s). Credentials, regions and
//! accounts come from the crate's standard environment variables (`AWS_*`, `GOOGLE_*`,
//! `AZURE_*`). Requests are retried with back-off by the crate, for a bounded time, so a stopped
//! server is an error after seconds, not a hang.

use std::collections::VecDeque;
use std::future::Future;
use std::io::Write;
use std::ops::Range;
use std::sync::mpsc::{sync_channel, Sender};
use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{
    BackoffConfig, ClientConfigKey, GetOptions, MultipartUpload, ObjectStore, PutPayload,
    RetryConfig,
};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle as TaskHandle;

use super::{Listing, ObjectInfo, Part, PendingRead, ReadAhead, Store, Upload};
use crate::error::{Error, Result};

/// How to reach a remote store, and how to read it, from the shared `--remote-*` flags.
#[derive(Debug, Clone, Default)]
pub struct RemoteOptions {
    /// An S3- or GCS-compatible server's URL (`http://` allowed for it).
    pub endpoint: Option<String>,
    pub read_ahead: ReadAhead,
}

pub struct Remote {
    /// The URL as given, without a trailing `/`: what messages name objects by.
    url: String,
    prefix: String,
    store: Arc<dyn ObjectStore>,
    read_ahead: ReadAhead,
    /// Shared with the uploads the store starts.
    runtime: Arc<Runtime>,
}

/// An upload's part size: S3 wants at least 5 MiB for every part but the last, and a few
/// large parts keep the request count low (a 1 GiB object is 128 parts of S3's 10,000).
pub const PART_BYTES: usize = 8 << 20;
/// Parts sent at once: the upload holds at most this many parts plus the one being filled.
pub const PARTS_IN_FLIGHT: usize = 2;

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
            "gs" => {
                use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
                let mut b = TIMEOUTS.iter().fold(
                    GoogleCloudStorageBuilder::from_env().with_url(location),
                    |b, (k, v)| b.with_config(GoogleConfigKey::Client(*k), *v),
                );
                if let Some(e) = &options.endpoint {
                    // The crate takes another server's URL only from a service-account key
                    // (`gcs_base_url`); a GCS-compatible server (an emulator) is reached
                    // without OAuth, as the crate's `disable_oauth` does it.
                    let key = serde_json::json!({
                        "private_key": "",
                        "private_key_id": "",
                        "client_email": "",
                        "gcs_base_url": e.trim_end_matches('/'),
                        "disable_oauth": true,
                    });
                    b = b.with_service_account_key(key.to_string()).with_config(
                        GoogleConfigKey::Client(ClientConfigKey::AllowHttp),
                        e.starts_with("http://").to_string(),
                    );
                }
                Arc::new(
                    b.with_retry(retry())
                        .build()
                        .map_err(|e| bad(error_text(&e)))?,
                )
            }
            // A filesystem tree is the directory store's (`store::open`): here only a URL
            // that names no local path.
            "file" => return Err(bad("not a local path".into())),
            "memory" => Arc::new(object_store::memory::InMemory::new()),
            s => {
                return Err(bad(format!(
                    "the scheme {s}:// is not supported (s3://, gs://, az://, file://, memory://)"
                )))
            }
        };
        // Threads of its own, one per core: the requests in flight go on while kseg works on
        // the bytes that have arrived, and several are received at once. Receiving, the
        // kernel's copy from the socket most of it, is heavier than checking what arrived: on
        // one thread it bounded a remote walk (80% of `tiered --deep`'s samples, the walk 20%).
        let io = |e| Error::io(std::path::Path::new(location), e);
        let runtime = Arc::new(
            tokio::runtime::Builder::new_multi_thread()
                .thread_name("kseg-store")
                .enable_all()
                .build()
                .map_err(io)?,
        );
        Ok(Remote {
            url: location.trim_end_matches('/').to_string(),
            prefix,
            store,
            read_ahead: options.read_ahead,
            runtime,
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

    /// Runs `task` on the runtime's threads and waits for its answer.
    fn run<T: Send + 'static>(&self, task: impl Future<Output = T> + Send + 'static) -> T {
        let (tx, rx) = sync_channel(1);
        self.runtime.spawn(async move {
            let _ = tx.send(task.await);
        });
        rx.recv()
            .expect("the store's runtime runs its tasks to the end while the store is open")
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

/// A read of bytes `range` of the object `name` that failed at byte `at` (a transfer cut
/// short, a refusal): where, beside why. A missing object is missing wherever it was read.
fn failed_at(name: &str, e: object_store::Error, range: Range<u64>, at: u64) -> Error {
    if let object_store::Error::NotFound { .. } = e {
        return failed(name, e);
    }
    Error::invalid(
        std::path::Path::new(name),
        format!(
            "at byte {at} (reading bytes {}..{}): {}",
            range.start,
            range.end,
            error_text(&e)
        ),
    )
}

/// A failed upload of the object `name`. Not found here is the bucket or the upload, not the
/// object: the server's own words say which.
fn failure(name: &str, e: object_store::Error) -> Error {
    Error::invalid(std::path::Path::new(name), error_text(&e))
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

/// Sends the bytes `range` of `loc` on `parts` as the transfer delivers them (the HTTP
/// client's own buffers: no copy, and memory that is reused as soon as the reader is done with
/// a part), then the end; or the error that stopped them.
async fn send_range(
    store: &dyn ObjectStore,
    loc: &ObjectPath,
    range: Range<u64>,
    parts: &Sender<Part>,
    at: &mut u64,
) -> object_store::Result<()> {
    if !range.is_empty() {
        // An empty range is no valid request.
        let options = GetOptions {
            range: Some(range.into()),
            ..Default::default()
        };
        let mut body = store.get_opts(loc, options).await?.into_stream();
        while let Some(bytes) = body.try_next().await? {
            // An empty frame (HTTP/2 allows them) is no part: the reader takes an empty part
            // for a transfer cut short.
            if bytes.is_empty() {
                continue;
            }
            *at += bytes.len() as u64;
            if parts.send(Ok(Some(bytes))).is_err() {
                // The reader is gone.
                return Ok(());
            }
        }
    }
    let _ = parts.send(Ok(None));
    Ok(())
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
        // Unbounded in parts, bounded in bytes: the range's.
        let (tx, rx) = std::sync::mpsc::channel();
        let (store, loc, failed_name) = (Arc::clone(&self.store), self.location(key), name.clone());
        let task = self.runtime.spawn(async move {
            let mut at = range.start;
            if let Err(e) = send_range(store.as_ref(), &loc, range.clone(), &tx, &mut at).await {
                let _ = tx.send(Err(failed_at(&failed_name, e, range, at)));
            }
        });
        PendingRead::task(name, rx, task.abort_handle())
    }

    fn read_ahead(&self) -> ReadAhead {
        self.read_ahead
    }

    fn list(&self, prefix: &str) -> Result<Listing> {
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
        Ok(Listing {
            objects: out,
            // An object store holds objects only.
            not_objects: Vec::new(),
        })
    }

    fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
        let (store, loc) = (Arc::clone(&self.store), self.location(key));
        self.run(async move { store.put(&loc, bytes.into()).await })
            .map(|_| ())
            .map_err(|e| self.fail(key, e))
    }

    fn upload(&self, key: &str) -> Result<Box<dyn Upload>> {
        Ok(Box::new(RemoteUpload {
            store: Arc::clone(&self.store),
            runtime: Arc::clone(&self.runtime),
            location: self.location(key),
            name: self.name(key),
            part: Vec::with_capacity(PART_BYTES),
            multipart: None,
            in_flight: VecDeque::new(),
            size: 0,
            failed: false,
            done: false,
        }))
    }
}

/// An object sent in parts of [`PART_BYTES`] by a multipart upload, at most
/// [`PARTS_IN_FLIGHT`] at once (a write waits for room), completed by `finish`. An object smaller than a part is one
/// PUT at `finish`. On any failure, or when dropped unfinished, the multipart upload is
/// aborted: the parts sent are deleted and nothing appears under the key.
struct RemoteUpload {
    store: Arc<dyn ObjectStore>,
    runtime: Arc<Runtime>,
    location: ObjectPath,
    name: String,
    /// The part being filled.
    part: Vec<u8>,
    /// Started by the first full part.
    multipart: Option<Box<dyn MultipartUpload>>,
    in_flight: VecDeque<TaskHandle<object_store::Result<()>>>,
    size: u64,
    failed: bool,
    done: bool,
}

impl RemoteUpload {
    /// Sends the part filled so far, once fewer than [`PARTS_IN_FLIGHT`] are on their way.
    fn send_part(&mut self) -> object_store::Result<()> {
        let multipart = match &mut self.multipart {
            Some(m) => m,
            None => {
                let m = self
                    .runtime
                    .block_on(self.store.put_multipart(&self.location))?;
                self.multipart.insert(m)
            }
        };
        while self.in_flight.len() >= PARTS_IN_FLIGHT {
            let oldest = self.in_flight.pop_front().expect("parts in flight");
            join(&self.runtime, oldest)?;
        }
        let bytes = std::mem::replace(&mut self.part, Vec::with_capacity(PART_BYTES));
        // Spawned: the store's own threads send the parts in flight while the export goes on
        // encoding the next one.
        let sent = multipart.put_part(PutPayload::from(bytes));
        self.in_flight.push_back(self.runtime.spawn(sent));
        Ok(())
    }

    fn complete(&mut self) -> object_store::Result<()> {
        if self.multipart.is_none() {
            let whole = PutPayload::from(std::mem::take(&mut self.part));
            return self
                .runtime
                .block_on(self.store.put(&self.location, whole))
                .map(|_| ());
        }
        if !self.part.is_empty() {
            self.send_part()?;
        }
        while let Some(part) = self.in_flight.pop_front() {
            join(&self.runtime, part)?;
        }
        let multipart = self.multipart.as_mut().expect("started");
        self.runtime.block_on(multipart.complete()).map(|_| ())
    }

    /// Stops the parts in flight and deletes the ones sent.
    fn abort(&mut self) {
        for part in self.in_flight.drain(..) {
            part.abort();
        }
        if let Some(m) = &mut self.multipart {
            // Nothing is visible under the key either way; a failed abort leaves parts that
            // the bucket's lifecycle rule for incomplete uploads removes (docs/export.md).
            let _ = self.runtime.block_on(m.abort());
        }
        self.multipart = None;
    }
}

/// Waits for a spawned request.
fn join(runtime: &Runtime, task: TaskHandle<object_store::Result<()>>) -> object_store::Result<()> {
    runtime
        .block_on(task)
        .map_err(|e| object_store::Error::JoinError { source: e })?
}

impl Write for RemoteUpload {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.failed {
            return Err(std::io::Error::other("the upload failed"));
        }
        let n = buf.len().min(PART_BYTES - self.part.len());
        self.part.extend_from_slice(&buf[..n]);
        self.size += n as u64;
        if self.part.len() == PART_BYTES {
            if let Err(e) = self.send_part() {
                self.failed = true;
                self.abort();
                return Err(std::io::Error::other(error_text(&e)));
            }
        }
        Ok(n)
    }

    /// Parts go out when full: a flush sends nothing (S3 takes no small parts but the last).
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Upload for RemoteUpload {
    fn finish(mut self: Box<Self>) -> Result<u64> {
        if self.failed {
            return Err(Error::invalid(
                std::path::Path::new(&self.name),
                "the upload failed",
            ));
        }
        match self.complete() {
            Ok(()) => {
                self.done = true;
                Ok(self.size)
            }
            Err(e) => {
                self.abort();
                Err(failure(&self.name, e))
            }
        }
    }
}

impl Drop for RemoteUpload {
    fn drop(&mut self) {
        if !self.done {
            self.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    /// An upload whose second part fails, as a server that stops answering would.
    #[derive(Debug)]
    struct FailsPart2 {
        inner: Box<dyn MultipartUpload>,
        parts: usize,
        aborted: Arc<AtomicBool>,
    }

    type Pending<'a, T> =
        std::pin::Pin<Box<dyn std::future::Future<Output = object_store::Result<T>> + Send + 'a>>;

    // The trait's async methods written out as the `async_trait` macro would expand them
    // (kseg does not depend on the macro).
    impl MultipartUpload for FailsPart2 {
        fn put_part(&mut self, data: PutPayload) -> object_store::UploadPart {
            self.parts += 1;
            if self.parts == 2 {
                return Box::pin(async {
                    Err(object_store::Error::Generic {
                        store: "test",
                        source: "connection reset".into(),
                    })
                });
            }
            self.inner.put_part(data)
        }

        fn complete<'a, 'b>(&'a mut self) -> Pending<'b, object_store::PutResult>
        where
            'a: 'b,
            Self: 'b,
        {
            self.inner.complete()
        }

        fn abort<'a, 'b>(&'a mut self) -> Pending<'b, ()>
        where
            'a: 'b,
            Self: 'b,
        {
            self.aborted.store(true, Ordering::SeqCst);
            self.inner.abort()
        }
    }

    fn memory() -> Remote {
        Remote::over(
            "memory://t",
            Arc::new(object_store::memory::InMemory::new()),
            ReadAhead::default(),
        )
        .unwrap()
    }

    /// Parts go out as they fill, whole; a small object is one PUT.
    #[test]
    fn an_upload_is_its_bytes_in_parts() {
        let store = memory();
        let data: Vec<u8> = (0..PART_BYTES * 2 + 1000)
            .map(|i| (i % 253) as u8)
            .collect();
        let mut u = store.upload("a/b").unwrap();
        for chunk in data.chunks(100_000) {
            u.write_all(chunk).unwrap();
        }
        assert_eq!(u.finish().unwrap(), data.len() as u64);
        assert_eq!(store.read_all("a/b").unwrap(), data);
        let mut u = store.upload("small").unwrap();
        u.write_all(b"abc").unwrap();
        assert_eq!(u.finish().unwrap(), 3);
        assert_eq!(store.read_all("small").unwrap(), b"abc");
    }

    /// A part that fails: the write fails with its cause, the upload is aborted, and nothing
    /// appears under the key.
    #[test]
    fn a_failed_part_aborts_the_upload() {
        let store = memory();
        let aborted = Arc::new(AtomicBool::new(false));
        let loc = store.location("a/b");
        let inner = store
            .runtime
            .block_on(store.store.put_multipart(&loc))
            .unwrap();
        let mut u = RemoteUpload {
            store: Arc::clone(&store.store),
            runtime: Arc::clone(&store.runtime),
            location: loc,
            name: store.name("a/b"),
            part: Vec::new(),
            multipart: Some(Box::new(FailsPart2 {
                inner,
                parts: 0,
                aborted: Arc::clone(&aborted),
            })),
            in_flight: VecDeque::new(),
            size: 0,
            failed: false,
            done: false,
        };
        let chunk = vec![7u8; 1 << 20];
        let failed = (0..PART_BYTES * 5 / chunk.len())
            .find_map(|_| u.write_all(&chunk).err())
            .expect("a write fails");
        assert!(failed.to_string().contains("connection reset"), "{failed}");
        assert!(aborted.load(Ordering::SeqCst));
        let e = Box::new(u).finish().unwrap_err().to_string();
        assert!(e.contains("memory://t/a/b"), "{e}");
        let e = store.len("a/b").unwrap_err().to_string();
        assert!(e.contains("no such object"), "{e}");
    }
}
