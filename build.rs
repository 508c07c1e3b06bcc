//! Build facts for `kseg --version`: the git commit (when built from a clone), the build date
//! (UTC) and the enabled cargo features, as environment variables for `env!`. No git or no
//! `.git` (a crate tarball) is no build failure: the commit says `unknown`.

use std::process::Command;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_owned())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    // Rebuilt on a new commit or checkout, not on every edit of the sources.
    for file in ["HEAD", "logs/HEAD"] {
        if let Some(path) = output("git", &["rev-parse", "--git-path", file]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    let commit = output("git", &["rev-parse", "--short=12", "HEAD"]);
    println!(
        "cargo:rustc-env=KSEG_GIT_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    // Seconds since the epoch (SOURCE_DATE_EPOCH when set, for reproducible builds); the
    // program prints it as a date.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let date = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(now);
    println!("cargo:rustc-env=KSEG_BUILD_EPOCH={date}");
    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(str::to_owned))
        .map(|f| f.to_lowercase().replace('_', "-"))
        .collect();
    features.sort();
    println!("cargo:rustc-env=KSEG_FEATURES={}", features.join(","));
}
