//! `anvil serve` running in a test project, and a small HTTP/1.1 client that can send what a
//! browser would not (a foreign `Host`, a forged `Origin`), over real TCP on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::anvil::Project;

/// A running `anvil serve`; killed when dropped.
pub struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT/?token=…`, the first line it printed.
    pub url: String,
    pub port: u16,
    pub token: String,
}

impl Served {
    pub fn start(project: &Project) -> Served {
        Served::start_with(project, &[])
    }

    /// `anvil serve` with these variables added to its environment (the headless runs it
    /// starts inherit them: `ANVIL_CLAUDE_BIN`, the model server's address, a `HOME`).
    pub fn start_with(project: &Project, env: &[(&str, std::ffi::OsString)]) -> Served {
        let mut command = project.command(&["serve"]);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start anvil serve");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("read the URL");
        let url = first.trim().to_owned();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
            "the first line on stdout is the URL with its token: {url:?}"
        );
        let port = url["http://127.0.0.1:".len()..]
            .split('/')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port in the URL");
        let token = url.split("token=").nth(1).expect("a token").to_owned();
        Served {
            child,
            url,
            port,
            token,
        }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// A request with the token in the `Authorization` header.
    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path).bearer(&self.token).send()
    }

    pub fn post(&self, path: &str, body: &Value) -> Response {
        self.request("POST", path)
            .bearer(&self.token)
            .json(body)
            .send()
    }

    pub fn request(&self, method: &str, path: &str) -> Request {
        Request {
            port: self.port,
            method: method.to_owned(),
            path: path.to_owned(),
            headers: vec![("Host".into(), self.host())],
            body: Vec::new(),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Request {
    port: u16,
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    /// A request to the server on `port` of 127.0.0.1, with its `Host`.
    pub fn new(port: u16, method: &str, path: &str) -> Request {
        Request {
            port,
            method: method.to_owned(),
            path: path.to_owned(),
            headers: vec![("Host".into(), format!("127.0.0.1:{port}"))],
            body: Vec::new(),
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn bearer(self, token: &str) -> Request {
        self.header("Authorization", &format!("Bearer {token}"))
    }

    pub fn json(self, body: &Value) -> Request {
        self.raw_body("application/json", body.to_string().into_bytes())
    }

    pub fn raw_body(mut self, kind: &str, body: Vec<u8>) -> Request {
        self.body = body;
        self.header("Content-Type", kind)
    }

    fn write(&self, stream: &mut TcpStream) {
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if !self.body.is_empty() || self.method == "POST" {
            head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        head.push_str("Connection: close\r\n\r\n");
        stream.write_all(head.as_bytes()).expect("send head");
        // A server may answer (413) before reading everything: a failed write is not ours.
        let _ = stream.write_all(&self.body);
    }

    pub fn send(self) -> Response {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        self.write(&mut stream);
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        Response::parse(&raw)
    }

    /// Opens an event stream: the response head is read, the body is left to [`Events`].
    pub fn events(self) -> Events {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        self.write(&mut stream);
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).expect("status line");
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("header");
            if line.trim().is_empty() {
                break;
            }
        }
        Events {
            status: status.split_whitespace().nth(1).unwrap_or("").to_owned(),
            reader,
        }
    }
}

/// A server-sent event stream (chunked; chunk sizes are skipped as lines that are not fields).
pub struct Events {
    pub status: String,
    reader: BufReader<TcpStream>,
}

impl Events {
    /// The next event as (event name, data); `None` on timeout or end.
    pub fn next(&mut self) -> Option<(String, String)> {
        let (mut event, mut data) = (String::new(), String::new());
        loop {
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if let Some(e) = line.strip_prefix("event:") {
                event = e.trim().to_owned();
            } else if let Some(d) = line.strip_prefix("data:") {
                data.push_str(d.trim());
            } else if line.is_empty() && !event.is_empty() {
                return Some((event, data));
            }
        }
    }
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    fn parse(raw: &[u8]) -> Response {
        let text = String::from_utf8_lossy(raw).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let chunked = headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        let body = if chunked {
            dechunk(body)
        } else {
            body.to_owned()
        };
        Response {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == &name.to_ascii_lowercase())
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.body))
    }

    /// The `error` of a JSON error answer, checking the status.
    pub fn error(&self, status: u16) -> String {
        assert_eq!(self.status, status, "{}", self.body);
        self.json()["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error field: {}", self.body))
            .to_owned()
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}
