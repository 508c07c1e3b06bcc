//! moto's S3 server (`python3 -m moto.server`, from `pip install 'moto[server]'`), shared by
//! tests/tiered.rs and benches/tiered.rs: a real S3-compatible server on 127.0.0.1.

use std::process::{Child, Command, Stdio};

/// moto's S3 server on a free port of 127.0.0.1, killed when dropped.
pub struct Moto {
    child: Child,
    pub endpoint: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `env`: moto's settings for the server (`INITIAL_NO_AUTH_ACTION_COUNT`: authenticate
/// requests, checking their signatures, after that many).
pub fn start(env: &[(&str, &str)]) -> Option<Moto> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let spawned = Command::new("python3")
        .args([
            "-m",
            "moto.server",
            "-H",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ])
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match spawned {
        Ok(c) => c,
        Err(_) => return None,
    };
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
