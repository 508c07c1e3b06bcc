//! moto's S3 server (`python3 -m moto.server`, from `pip install 'moto[server]'`), shared by
//! tests/tiered.rs and benches/tiered.rs: a real S3-compatible server on 127.0.0.1.

use std::process::{Child, Command, Stdio};

/// A server on a free port of 127.0.0.1 (moto's, or s3s-fs's), killed when dropped.
pub struct Moto {
    child: Child,
    pub endpoint: String,
}

impl Moto {
    /// The server's process id.
    #[allow(dead_code)] // only benches/tiered.rs
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Moto {
    /// Asks the server to stop (SIGTERM), then kills it after a second: nginx's master, killed
    /// outright, leaves its workers running, listening on their port.
    fn drop(&mut self) {
        // SAFETY: a signal to the server's own process, which `child` has not reaped yet.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        for _ in 0..50 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `env`: moto's settings for the server (`INITIAL_NO_AUTH_ACTION_COUNT`: authenticate
/// requests, checking their signatures, after that many).
pub fn start(env: &[(&str, &str)]) -> Option<Moto> {
    let port = free_port();
    serve(
        Command::new("python3")
            .args(["-m", "moto.server", "-H", "127.0.0.1", "-p"])
            .arg(port.to_string())
            .envs(env.iter().copied()),
        port,
    )
}

/// The `s3s-fs` crate's S3 server (`cargo install s3s-fs --features binary`), which serves
/// requests in parallel where moto serves one at a time: the directory `root`, a bucket per
/// subdirectory, with SigV4 authentication of the access key `key` (its secret the same).
#[allow(dead_code)] // only benches/tiered.rs
pub fn start_s3s_fs(program: &std::path::Path, root: &std::path::Path, key: &str) -> Option<Moto> {
    let port = free_port();
    serve(
        Command::new(program)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--access-key", key, "--secret-key", key])
            .arg(root),
        port,
    )
}

/// nginx (Debian's package) in front of an S3 server: object reads served from the directory
/// `root` (a bucket per subdirectory) by `sendfile`, at next to no CPU, and listings passed on
/// to `lists`, the S3 server holding the same objects. What an S3 server whose CPU is not on
/// the reader's cores looks like to it. Its configuration and logs go in `dir`.
#[allow(dead_code)] // only benches/tiered.rs
pub fn start_nginx(root: &std::path::Path, dir: &std::path::Path, lists: &str) -> Option<Moto> {
    let port = free_port();
    let conf = dir.join("nginx.conf");
    let d = dir.display();
    let text = format!(
        "worker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  access_log off;\n  sendfile on;\n  server {{\n    \
         listen 127.0.0.1:{port};\n    root {};\n    location / {{\n      \
         if ($args ~ \"list-type\") {{ proxy_pass {lists}; }}\n    }}\n  }}\n}}\n",
        root.display()
    );
    std::fs::write(&conf, text).ok()?;
    serve(Command::new("nginx").arg("-c").arg(&conf), port)
}

/// moto's server as a GCS-compatible one: the same S3 server, whose XML API object_store's GCS
/// client speaks, less one quirk of moto's router. Without OAuth the client sends
/// `Authorization: Bearer ` with no token on uploads, which moto takes for a malformed SigV4
/// header and fails on (HTTP 500); the request is passed on without it, as it means no
/// credentials.
#[allow(dead_code)] // only tests/gcs.rs
pub fn start_gcs() -> Option<Moto> {
    const SERVE: &str = r#"
import sys
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
moto = DomainDispatcherApplication(create_backend_app)
def app(environ, start_response):
    if environ.get("HTTP_AUTHORIZATION", "").strip() == "Bearer":
        del environ["HTTP_AUTHORIZATION"]
    return moto(environ, start_response)
run_simple("127.0.0.1", int(sys.argv[1]), app, threaded=True)
"#;
    let port = free_port();
    serve(
        Command::new("python3")
            .args(["-c", SERVE])
            .arg(port.to_string()),
        port,
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs the server `cmd` listening on `port` of 127.0.0.1; returns once it accepts connections.
fn serve(cmd: &mut Command, port: u16) -> Option<Moto> {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let endpoint = format!("http://127.0.0.1:{port}");
    let mut moto = Moto { child, endpoint };
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(moto);
        }
        if moto.child.try_wait().ok().flatten().is_some() {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    None
}

/// moto, or None when it is not installed and CI (`KSEG_REFERENCE`) is not running.
#[allow(dead_code)] // the benchmark needs moto: it never skips
pub fn start_or_skip(env: &[(&str, &str)]) -> Option<Moto> {
    or_skip(start(env))
}

/// [`start_gcs`], or None as [`start_or_skip`].
#[allow(dead_code)]
pub fn start_gcs_or_skip() -> Option<Moto> {
    or_skip(start_gcs())
}

fn or_skip(m: Option<Moto>) -> Option<Moto> {
    if m.is_none() {
        assert!(
            std::env::var_os("KSEG_REFERENCE").is_none(),
            "moto is not installed (pip install 'moto[server]'): .ci/run installs it"
        );
        eprintln!("moto not installed: S3 tests not run");
    }
    m
}

/// Creates `bucket` (moto creates one on a plain PUT).
#[allow(dead_code)] // the benchmark has its own bucket
pub fn create_bucket(endpoint: &str, bucket: &str) {
    let created = Command::new("python3")
        .args([
            "-c",
            &format!(
                "import urllib.request as u; u.urlopen(u.Request('{endpoint}/{bucket}', method='PUT'))"
            ),
        ])
        .status()
        .unwrap();
    assert!(created.success());
}

/// Lets anyone read and write `bucket`, by a bucket policy: moto refuses unsigned reads of
/// private objects, as S3 does, and a GCS client without OAuth signs nothing.
#[allow(dead_code)] // only tests/gcs.rs
pub fn allow_anonymous(endpoint: &str, bucket: &str) {
    let policy = format!(
        r#"{{"Version": "2012-10-17", "Statement": [{{"Effect": "Allow", "Principal": "*", "Action": "s3:*", "Resource": ["arn:aws:s3:::{bucket}", "arn:aws:s3:::{bucket}/*"]}}]}}"#
    );
    let put = Command::new("python3")
        .args([
            "-c",
            &format!(
                "import urllib.request as u; u.urlopen(u.Request('{endpoint}/{bucket}?policy', \
                 data={policy:?}.encode(), method='PUT', \
                 headers={{'Content-Type': 'application/json'}}))"
            ),
        ])
        .status()
        .unwrap();
    assert!(put.success());
}
