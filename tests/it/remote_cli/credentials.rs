//! A remote URL's password is git's alone: anvil never prints, stores or names it, against a
//! smart-HTTP server on 127.0.0.1 that asks for it as a forge does.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::anvil::{Project, Run, git_in as git};
use crate::support::snap::Filters;

use super::{anvil_refs, clone, debate, remote, tip};

/// A smart-HTTP git server on 127.0.0.1 (`git http-backend` behind tiny_http) that serves the
/// repositories under `root` only to `alice` with [`HTTP_PASSWORD`], as a forge does with a
/// token: git sends the URL's credentials after the first 401. Stopped when dropped.
struct HttpRemote {
    server: std::sync::Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
    port: u16,
}

const HTTP_PASSWORD: &str = "s3cr3t-t0ken";
/// `Basic base64("alice:s3cr3t-t0ken")`.
const HTTP_AUTHORIZATION: &str = "Basic YWxpY2U6czNjcjN0LXQwa2Vu";

impl Drop for HttpRemote {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn http_remote(root: &Path) -> HttpRemote {
    let server = std::sync::Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
    let port = server.server_addr().to_ip().unwrap().port();
    let root = root.to_owned();
    let serving = server.clone();
    let thread = std::thread::spawn(move || {
        for request in serving.incoming_requests() {
            serve_git(request, &root);
        }
    });
    HttpRemote {
        server,
        thread: Some(thread),
        port,
    }
}

/// One request, answered through `git http-backend` as a CGI program.
fn serve_git(mut request: tiny_http::Request, root: &Path) {
    use std::io::Write;
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|h| {
            (
                h.field.as_str().as_str().to_owned(),
                h.value.as_str().to_owned(),
            )
        })
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(field, _)| field.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    };
    if header("Authorization").as_deref() != Some(HTTP_AUTHORIZATION) {
        let challenge =
            tiny_http::Header::from_bytes(&b"WWW-Authenticate"[..], &b"Basic realm=\"git\""[..])
                .unwrap();
        let _ = request.respond(
            tiny_http::Response::from_string("who are you?")
                .with_status_code(401)
                .with_header(challenge),
        );
        return;
    }
    let (path, query) = request
        .url()
        .split_once('?')
        .map(|(p, q)| (p.to_owned(), q.to_owned()))
        .unwrap_or_else(|| (request.url().to_owned(), String::new()));
    let mut body = Vec::new();
    request.as_reader().read_to_end(&mut body).unwrap();
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("REMOTE_USER", "alice")
        .env("REQUEST_METHOD", request.method().as_str())
        .env("PATH_INFO", &path)
        .env("QUERY_STRING", &query)
        .env("CONTENT_LENGTH", body.len().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (variable, name) in [
        ("CONTENT_TYPE", "Content-Type"),
        ("HTTP_CONTENT_ENCODING", "Content-Encoding"),
        ("GIT_PROTOCOL", "Git-Protocol"),
    ] {
        if let Some(value) = header(name) {
            cgi.env(variable, value);
        }
    }
    let mut child = cgi.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| (at, at + 4))
        .or_else(|| {
            out.stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|at| (at, at + 2))
        })
        .unwrap_or((out.stdout.len(), out.stdout.len()));
    let head = String::from_utf8_lossy(&out.stdout[..split.0]).into_owned();
    let mut response = tiny_http::Response::from_data(out.stdout[split.1..].to_vec());
    for line in head.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("Status") {
            let code = value.split(' ').next().and_then(|c| c.parse().ok());
            response = response.with_status_code(code.unwrap_or(500));
        } else if let Ok(h) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            response = response.with_header(h);
        }
    }
    let _ = request.respond(response);
}

/// A remote's URL may carry a password (`http://alice:TOKEN@host/…`, as a CI job or a forge
/// token gives it). git uses it; anvil never prints it (text, `--json`, notes, errors), never
/// stores it (the folder the remote's lines are tracked under) and never names a line after it:
/// a line that diverged is kept under the remote's host, or the last part of its path. A name
/// an older anvil built from the password still reads, and is not copied again.
#[test]
fn credentials_in_a_remote_url_are_never_printed_stored_or_named() {
    let dir = tempfile::tempdir().unwrap();
    let (bare, _) = remote(dir.path());
    let by_path = bare.to_str().unwrap();
    let (alice, bob) = (clone(by_path, "Alice"), clone(by_path, "Bob"));
    let id = debate(&alice);
    alice.anvil(&["push"]).ok();
    bob.anvil(&["pull"]).ok();
    for (who, steer) in [(&alice, "Think of cost."), (&bob, "Think of people.")] {
        who.anvil(&[
            "branch",
            "--from",
            &format!("{id}@main:round-1"),
            "--steer",
            steer,
            "--name",
            "cost",
        ])
        .ok();
    }
    alice.anvil(&["push"]).ok();
    let git_update_server_info = || git(&bare, &["update-server-info"]);
    git_update_server_info();

    // The repository itself at the server's root: a URL with no path, as in the report.
    let at_root = http_remote(&bare);
    let root_url = format!("http://alice:{HTTP_PASSWORD}@127.0.0.1:{}", at_root.port);
    let leaks = |text: &str| text.to_lowercase().contains(HTTP_PASSWORD);
    let tracking = |p: &Project| p.git(&["for-each-ref", "--format=%(refname)"]);

    // An older anvil named this remote's tracking folder after the password and the hash of
    // the whole URL: the next pull empties it.
    let old_hash = {
        let mut hash = Command::new("git")
            .args(["hash-object", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        hash.stdin
            .take()
            .unwrap()
            .write_all(root_url.as_bytes())
            .unwrap();
        String::from_utf8(hash.wait_with_output().unwrap().stdout).unwrap()[..8].to_owned()
    };
    let old_folder = format!("refs/anvil-remote/{}-{old_hash}", at_root.port);
    bob.git(&[
        "update-ref",
        &format!("{old_folder}/{id}/main"),
        &tip(&bob, &id, "main"),
    ]);

    let pulled = bob
        .command(&["pull", &root_url])
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap();
    let pulled = Run::from_output(pulled).ok();
    let kept = "cost-from-127-0-0-1";
    // A diverged line is named after the host; the remote is named without its password.
    let filters = Filters::of(&bob);
    insta::assert_snapshot!(
        "pull_over_http",
        filters.run(
            "anvil pull http://alice:[password]@127.0.0.1:[port]/",
            &pulled
        )
    );
    assert!(!leaks(&pulled.describe()), "{}", pulled.describe());
    assert_eq!(tip(&bob, &id, kept), tip(&alice, &id, "cost"));
    let refs = tracking(&bob);
    assert!(!leaks(&refs), "{refs}");
    assert!(
        !refs.contains(&old_folder),
        "the old folder is gone: {refs}"
    );
    assert!(refs.contains("refs/anvil-remote/127-0-0-1-"), "{refs}");

    // A copy an older anvil kept under a name it built from the password still reads, and a
    // pull does not copy the line again beside it.
    let older = "cost-from-s3cr3t-t0ken-127-0-0-1";
    bob.git(&[
        "update-ref",
        &format!("refs/anvil/{id}/{older}"),
        &tip(&bob, &id, kept),
    ]);
    bob.git(&["update-ref", "-d", &format!("refs/anvil/{id}/{kept}")]);
    let again = Run::from_output(bob.command(&["pull", &root_url]).output().unwrap()).ok();
    insta::assert_snapshot!(
        "pull_over_http_again",
        filters.run(
            "anvil pull http://alice:[password]@127.0.0.1:[port]/",
            &again
        )
    );
    let shown = bob.anvil(&["show", &format!("{id}@{older}")]).ok();
    insta::assert_snapshot!(
        "show_a_line_an_older_anvil_named",
        filters.redact(&shown.stdout)
    );
    bob.git(&["update-ref", "-d", &format!("refs/anvil/{id}/{older}")]);

    // Pushing through the server (the shared repository by its path under the server's root):
    // the diverged line goes beside the remote's under Bob's name, and nothing says the password.
    let served = http_remote(dir.path());
    let url = format!(
        "http://alice:{HTTP_PASSWORD}@127.0.0.1:{}/shared.git",
        served.port
    );
    let shown_url = format!("http://127.0.0.1:{}/shared.git", served.port);
    let pushed = Run::from_output(bob.command(&["push", &url, "--json"]).output().unwrap()).ok();
    let json = pushed.json().expect("JSON");
    assert_eq!(json["remote"], shown_url.as_str(), "{}", pushed.describe());
    assert_eq!(json["name"], "shared", "{}", pushed.describe());
    assert!(!leaks(&pushed.describe()), "{}", pushed.describe());
    let on_remote = anvil_refs(&bare);
    assert!(
        on_remote.contains(&format!("refs/anvil/{id}/cost-from-bob")),
        "{on_remote:?}"
    );
    assert!(!on_remote.iter().any(|r| leaks(r)), "{on_remote:?}");
    assert!(!leaks(&tracking(&bob)));

    // What git says when it fails is cleaned too: a wrong password, a repository that is not
    // there.
    for bad in [
        format!(
            "http://alice:wr0ng-{HTTP_PASSWORD}@127.0.0.1:{}/shared.git",
            served.port
        ),
        format!(
            "http://alice:{HTTP_PASSWORD}@127.0.0.1:{}/missing.git",
            served.port
        ),
    ] {
        let failed = Run::from_output(
            bob.command(&["pull", &bad])
                .env("GIT_TERMINAL_PROMPT", "0")
                .output()
                .unwrap(),
        );
        assert_eq!(failed.code, Some(1), "{}", failed.describe());
        assert!(!leaks(&failed.describe()), "{}", failed.describe());
        assert!(failed.stderr.contains("127.0.0.1"), "{}", failed.describe());
    }
    bob.assert_fsck_clean();
}
