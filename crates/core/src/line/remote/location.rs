//! Where a remote is: a URL, a path or a remote of the project's git repository, read as git
//! reads it, with its credentials kept for git alone.

use std::path::Path;

use super::RemoteError;
use crate::home::Home;
use crate::record::git::{Git, GitError};

/// Where a remote is, and the short name its lines are kept under.
///
/// A URL may carry credentials (`https://alice:TOKEN@host/team.git`, `https://TOKEN@host/…`):
/// git needs them, nobody else sees them. The URL as given goes to git only; what anvil prints,
/// stores or names (messages, `--json`, the tracking folder, `LINE-from-NAME`) comes from
/// [`Remote::shown`] and [`Remote::name`], which never hold a user name or a password.
#[derive(Clone, PartialEq, Eq)]
pub struct Remote {
    /// A remote name of the project's git repository, or a URL or path given as is: handed to
    /// git, never shown.
    pub(super) url: String,
    /// The URL without its user name and password, as git shows it.
    pub shown: String,
    /// Used in `refs/anvil-remote/<name>-…/` and in `LINE-from-<name>`: the remote's configured
    /// name, else the last part of the URL's path, else its host.
    pub name: String,
    /// Named in the project's git configuration (`origin`), not given as a URL or a path.
    pub(super) configured: bool,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("shown", &self.shown)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// The remote at `given`, a URL or a path as the person wrote it.
    fn given(given: &str) -> Remote {
        let parsed = parse_location(given);
        Remote {
            url: given.to_owned(),
            shown: parsed.shown,
            name: parsed.name.unwrap_or_else(|| "remote".to_owned()),
            configured: false,
        }
    }

    /// `text` (what git said) with the URL as given replaced by the one shown, and any other
    /// credentials in a URL taken out.
    pub(super) fn clean(&self, text: &str) -> String {
        let text = if self.url != self.shown {
            text.replace(&self.url, &self.shown)
        } else {
            text.to_owned()
        };
        without_credentials_in(&text)
    }

    /// A git error of this remote's transport, with [`Remote::clean`] applied to what git said.
    pub(super) fn clean_error(&self, error: GitError) -> GitError {
        match error {
            GitError::Failed { what, message } => GitError::Failed {
                what,
                message: self.clean(&message),
            },
            other => other,
        }
    }
}

/// What is in a remote's URL: its form without credentials and the name its lines go under.
struct Parsed {
    shown: String,
    name: Option<String>,
}

/// Reads `given` (a URL, an scp-like `host:path`, or a path) with gix's parser, as git reads it.
fn parse_location(given: &str) -> Parsed {
    let Ok(mut url) = gix::url::parse(given) else {
        return Parsed {
            shown: without_credentials_in(given),
            name: None,
        };
    };
    let path = url.path.to_string();
    let last = path
        .trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .map(|last| last.strip_suffix(".git").unwrap_or(last))
        .unwrap_or_default();
    let name = safe_name(last).or_else(|| url.host().and_then(safe_name));
    let shown = if url.user().is_some() || url.password().is_some() {
        url.set_user(None);
        url.set_password(None);
        let mut out = Vec::new();
        match url.write_to(&mut out) {
            Ok(()) => String::from_utf8_lossy(&out).into_owned(),
            Err(_) => without_credentials_in(given),
        }
    } else {
        given.to_owned()
    };
    Parsed { shown, name }
}

/// `text` with the user part (`user:password@`, `TOKEN@`) of every `scheme://` URL in it taken
/// out: what git does to the URLs it prints.
fn without_credentials_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let authority_end = after
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == '\'')
            .unwrap_or(after.len());
        let authority = &after[..authority_end];
        match authority.rfind('@') {
            Some(user_end) => out.push_str(&authority[user_end + 1..]),
            None => out.push_str(authority),
        }
        rest = &after[authority_end..];
    }
    out.push_str(rest);
    out
}

/// Finds the remote: a URL or a path as is, else a remote of the project's git repository
/// (`origin` when none is named).
pub fn find(home: &Home, remote: Option<&str>) -> Result<Remote, RemoteError> {
    let given = remote.unwrap_or("origin");
    let looks_like_location = given.contains('/')
        || given.contains(':')
        || given.contains('\\')
        || Path::new(given).exists();
    if looks_like_location {
        return Ok(Remote::given(given));
    }
    let url = match Git::require()?
        .project(home.project())
        .args(["remote", "get-url", given])
        .output()
    {
        Ok(url) => url,
        Err(GitError::Failed { message, .. }) => {
            return Err(RemoteError::NoRemote {
                name: given.to_owned(),
                message: without_credentials_in(&message),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let url = url.trim().to_owned();
    Ok(Remote {
        shown: parse_location(&url).shown,
        url,
        name: safe_name(given).unwrap_or_else(|| "remote".to_owned()),
        configured: true,
    })
}

/// `text` as a part of a line name: letters, digits and `-`, lower case.
pub(super) fn safe_name(text: &str) -> Option<String> {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(30).collect();
    let out = out.trim_end_matches('-').to_owned();
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::super::beside_name;
    use super::super::fetch::{legacy_tracking_prefix, tracking_prefix};
    use super::*;

    /// Credentials in a remote's URL are handed to git only: the URL shown, the name of the
    /// lines kept beside and the tracking folder hold neither user nor password.
    #[test]
    fn credentials_in_a_url_are_never_shown_nor_named() {
        for (given, shown, name) in [
            ("http://alice:TOKEN@host/x.git", "http://host/x.git", "x"),
            ("http://alice:TOKEN@host", "http://host/", "host"),
            (
                "https://TOKEN@git.example.com:8443/",
                "https://git.example.com:8443/",
                "git-example-com",
            ),
            (
                "https://x-access-token:TOKEN@github.com/team/billing.git",
                "https://github.com/team/billing.git",
                "billing",
            ),
            (
                "ssh://alice:TOKEN@host/srv/team.git",
                "ssh://host/srv/team.git",
                "team",
            ),
            (
                "git@github.com:team/billing.git",
                "github.com:team/billing.git",
                "billing",
            ),
            // Without credentials, a location is shown and named as it always was.
            ("/srv/git/shared.git/", "/srv/git/shared.git/", "shared"),
            ("../shared.git", "../shared.git", "shared"),
            (
                "git://127.0.0.1:9418/shared.git",
                "git://127.0.0.1:9418/shared.git",
                "shared",
            ),
            (
                "https://github.com/team/billing",
                "https://github.com/team/billing",
                "billing",
            ),
        ] {
            let remote = Remote::given(given);
            assert_eq!(remote.shown, shown, "{given}");
            assert_eq!(remote.name, name, "{given}");
            let debug = format!("{remote:?}");
            for place in [
                &remote.shown,
                &remote.name,
                &tracking_prefix(&remote),
                &debug,
            ] {
                assert!(!place.to_lowercase().contains("token"), "{given}: {place}");
            }
            assert!(!beside_name("main", &remote.name, 1).contains("token"));
        }
        // A URL without credentials keeps the tracking folder an older anvil gave it.
        let plain = Remote::given("/srv/git/shared.git");
        assert_eq!(tracking_prefix(&plain), legacy_tracking_prefix(&plain));
        let with_token = Remote::given("http://alice:TOKEN@host");
        assert!(legacy_tracking_prefix(&with_token).contains("token-host-"));
        assert_ne!(
            tracking_prefix(&with_token),
            legacy_tracking_prefix(&with_token)
        );
        assert_eq!(
            tracking_prefix(&with_token),
            tracking_prefix(&Remote::given("http://bob:OTHER@host")),
            "the folder does not change with the password"
        );
    }

    #[test]
    fn what_git_says_is_cleaned_of_credentials() {
        let remote = Remote {
            url: "https://alice:s3cret@host/x.git".to_owned(),
            shown: "https://host/x.git".to_owned(),
            name: "x".to_owned(),
            configured: false,
        };
        let said = "fatal: unable to access 'https://alice:s3cret@host/x.git/': no route; \
                    also tried https://TOKEN@mirror.example/x.git and ssh://u:p@h/y";
        let cleaned = remote.clean(said);
        assert_eq!(
            cleaned,
            "fatal: unable to access 'https://host/x.git/': no route; \
                    also tried https://mirror.example/x.git and ssh://h/y"
        );
        assert_eq!(
            without_credentials_in("no url here: a@b"),
            "no url here: a@b"
        );
        assert_eq!(without_credentials_in("http://"), "http://");
    }
}
