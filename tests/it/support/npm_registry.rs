//! A small static npm registry on 127.0.0.1, serving the tarballs of a folder (what `cargo
//! xtask dist` wrote), so that install tests never reach a public registry.
//!
//! At start it reads each tarball's `package/package.json` (with the system's `tar`) and builds
//! the packuments npm asks for: `GET /NAME` answers every version of NAME with its manifest and
//! `dist` (the tarball's address on this server and its sha512 integrity); `GET
//! /NAME/-/FILE.tgz` answers the tarball. Anything else is a 404, as a registry answers for a
//! package it does not have. Every request is counted by path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::Digest as _;

pub struct Registry {
    server: Arc<tiny_http::Server>,
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

struct Package {
    packument: Value,
}

impl Registry {
    /// Serves every `*.tgz` of `dir`.
    pub fn start(dir: &Path) -> Registry {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let base = format!("http://127.0.0.1:{port}");
        let (packages, files) = read_tarballs(dir, &base);
        assert!(
            !packages.is_empty(),
            "no npm tarballs in {}: run `cargo xtask dist {}`",
            dir.display(),
            dir.display()
        );
        let requests = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let server = Arc::clone(&server);
            let requests = Arc::clone(&requests);
            std::thread::spawn(move || serve(&server, &packages, &files, &requests))
        };
        Registry {
            server,
            port,
            requests,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT/`, as npm's `--registry` takes it.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// The paths requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// Was the tarball of `package` downloaded?
    pub fn served_tarball_of(&self, package: &str) -> bool {
        let prefix = format!("/{package}/-/");
        self.requests().iter().any(|r| r.starts_with(&prefix))
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The packuments by package name, and the tarballs by request path.
fn read_tarballs(dir: &Path, base: &str) -> (BTreeMap<String, Package>, BTreeMap<String, PathBuf>) {
    let mut packages: BTreeMap<String, Package> = BTreeMap::new();
    let mut files = BTreeMap::new();
    let mut tarballs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tgz"))
        .collect();
    tarballs.sort();
    for tarball in tarballs {
        let out = Command::new("tar")
            .arg("-xzOf")
            .arg(&tarball)
            .arg("package/package.json")
            .output()
            .expect("run tar");
        assert!(
            out.status.success(),
            "{}: no package/package.json ({})",
            tarball.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut manifest: Value = serde_json::from_slice(&out.stdout).expect("package.json");
        let name = manifest["name"].as_str().expect("a name").to_owned();
        let version = manifest["version"].as_str().expect("a version").to_owned();
        let bytes = std::fs::read(&tarball).unwrap();
        let integrity = format!(
            "sha512-{}",
            base64::engine::general_purpose::STANDARD.encode(sha2::Sha512::digest(&bytes))
        );
        let file = tarball.file_name().unwrap().to_string_lossy().into_owned();
        let path = format!("/{name}/-/{file}");
        manifest["_id"] = json!(format!("{name}@{version}"));
        manifest["dist"] = json!({ "tarball": format!("{base}{path}"), "integrity": integrity });
        // npm's own registry marks packages with install scripts, so clients know before
        // unpacking.
        if manifest["scripts"].get("postinstall").is_some() {
            manifest["hasInstallScript"] = json!(true);
        }
        let package = packages.entry(name.clone()).or_insert_with(|| Package {
            packument: json!({ "name": name, "dist-tags": {}, "versions": {} }),
        });
        package.packument["versions"][&version] = manifest;
        package.packument["dist-tags"]["latest"] = json!(version);
        files.insert(path, tarball);
    }
    (packages, files)
}

fn serve(
    server: &tiny_http::Server,
    packages: &BTreeMap<String, Package>,
    files: &BTreeMap<String, PathBuf>,
    requests: &Mutex<Vec<String>>,
) {
    for request in server.incoming_requests() {
        let path = request.url().split('?').next().unwrap_or("").to_owned();
        requests.lock().unwrap().push(path.clone());
        let name = path
            .trim_start_matches('/')
            .replace("%2f", "/")
            .replace("%2F", "/");
        let response = if let Some(file) = files.get(&path) {
            let bytes = std::fs::read(file).unwrap_or_default();
            tiny_http::Response::from_data(bytes)
                .with_header(header("Content-Type", "application/octet-stream"))
        } else if let Some(package) = packages.get(&name) {
            tiny_http::Response::from_data(package.packument.to_string().into_bytes())
                .with_header(header("Content-Type", "application/json"))
        } else {
            tiny_http::Response::from_data(b"{\"error\":\"Not found\"}".to_vec())
                .with_status_code(404)
                .with_header(header("Content-Type", "application/json"))
        };
        let _ = request.respond(response);
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}
