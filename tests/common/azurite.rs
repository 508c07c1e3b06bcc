//! Azurite's Blob service (`azurite-blob`, from `npm install -g azurite`): a real Azure Blob
//! server on 127.0.0.1, reached by object_store's emulator mode (`AZURE_STORAGE_USE_EMULATOR`,
//! its well-known account `devstoreaccount1`).

use std::process::{Child, Command, Stdio};

/// The emulator's well-known account and key (Azurite's documentation publishes them).
pub const ACCOUNT: &str = "devstoreaccount1";
pub const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Azurite on a free port of 127.0.0.1, killed when dropped.
pub struct Azurite {
    child: Child,
    pub url: String,
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Azurite {
    /// The environment object_store reads to reach this server.
    pub fn env(&self, cmd: &mut Command) {
        cmd.env("AZURE_STORAGE_USE_EMULATOR", "true")
            .env("AZURE_ALLOW_HTTP", "true")
            .env("AZURITE_BLOB_STORAGE_URL", &self.url);
    }

    /// Creates `container` (a Shared Key signed `PUT ?restype=container`, made by Python's
    /// standard library: object_store has no call for it).
    pub fn create_container(&self, container: &str) {
        let script = format!(
            r#"
import base64, hmac, hashlib, urllib.request, email.utils
key = base64.b64decode("{KEY}")
date = email.utils.formatdate(usegmt=True)
version = "2021-08-06"
to_sign = "PUT\n" + "\n" * 11 + f"x-ms-date:{{date}}\nx-ms-version:{{version}}\n" \
    + "/{ACCOUNT}/{ACCOUNT}/{container}\nrestype:container"
sig = base64.b64encode(hmac.new(key, to_sign.encode(), hashlib.sha256).digest()).decode()
urllib.request.urlopen(urllib.request.Request(
    "{url}/{ACCOUNT}/{container}?restype=container", method="PUT",
    headers={{"x-ms-date": date, "x-ms-version": version, "Content-Length": "0",
             "Authorization": f"SharedKey {ACCOUNT}:{{sig}}"}}))
"#,
            url = self.url
        );
        let ok = Command::new("python3")
            .args(["-c", &script])
            .status()
            .unwrap();
        assert!(ok.success(), "creating container {container}");
    }
}

/// Azurite, or None when it is not installed and CI (`KSEG_REFERENCE`) is not running.
pub fn start_or_skip() -> Option<Azurite> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let spawned = Command::new("azurite-blob")
        .args([
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            &port.to_string(),
            "--inMemoryPersistence",
            "--silent",
            "--skipApiVersionCheck",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(child) = spawned else {
        assert!(
            std::env::var_os("KSEG_REFERENCE").is_none(),
            "azurite-blob is not installed (npm install -g azurite): .ci/run installs it"
        );
        eprintln!("azurite not installed: Azure tests not run");
        return None;
    };
    let mut azurite = Azurite {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(azurite);
        }
        if let Ok(Some(status)) = azurite.child.try_wait() {
            panic!("azurite-blob exited at start: {status}");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("azurite-blob did not listen on 127.0.0.1:{port} within 20 s");
}
