//! Reading objects (commits, trees, blobs, their times) and building the objects of a new
//! commit in memory; [`super::loose`] writes them.

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;
use gix::objs::{FindExt, Kind, WriteTo};

use super::{Base, COMMITTER, EMAIL, HASH, NewCommit, Record, RecordError, Staged};

impl Record {
    /// Writes the objects of a commit to add to a line: nothing refers to them until
    /// [`Record::publish`] moves the line.
    pub fn stage(&self, new: &NewCommit) -> Result<Staged, RecordError> {
        let name = Record::ref_name(&new.meta.debate, &new.meta.line);
        if gix::refs::FullName::try_from(name.as_str()).is_err() {
            return Err(RecordError::BadName(name));
        }
        // The commit's objects are built in memory and written together by `persist`.
        let mut built = Built::default();
        let mut blobs = Vec::with_capacity(new.files.len());
        for (path, bytes) in &new.files {
            blobs.push((path.as_str(), built.add(Kind::Blob, bytes.clone())));
        }
        let (parent, fork) = match new.base {
            Base::Tip(tip) => (tip, false),
            Base::Fork(from) => (Some(from), true),
        };
        let mut buf = Vec::new();
        // The parent and its tree were there a moment ago (the ref names the parent): one
        // that is not found has just been packed, and the caller opens the record again.
        let base_tree: gix::objs::Tree = match parent {
            Some(id) => {
                let tree = self
                    .objects
                    .find_commit(&id, &mut buf)
                    .map_err(|e| self.find_error(&format!("commit {id}"), e))?
                    .tree();
                self.objects
                    .find_tree(&tree, &mut buf)
                    .map_err(|e| self.find_error(&format!("tree {tree}"), e))?
                    .into()
            }
            None => gix::objs::Tree::empty(),
        };
        let mut editor = gix::objs::tree::Editor::new(base_tree, &self.objects, HASH);
        for (path, id) in &blobs {
            editor
                .upsert(path.split('/'), EntryKind::Blob, *id)
                .map_err(|e| self.read_error("the tree to edit", e))?;
        }
        for path in &new.remove {
            editor
                .remove(path.split('/'))
                .map_err(|e| self.read_error("the tree to edit", e))?;
        }
        let tree = editor
            .write(|tree| Ok::<_, std::convert::Infallible>(built.add_object(Kind::Tree, tree)))
            .map_err(|e| self.read_error("the tree to write", e))?;
        let signature = |name: &str| gix::actor::Signature {
            name: name.into(),
            email: EMAIL.into(),
            time: gix::date::Time::new(new.time, 0),
        };
        let message = crate::record::schema::message(&new.subject, &new.meta);
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: signature(&crate::record::schema::safe_name(&new.author)),
            committer: signature(COMMITTER),
            encoding: None,
            message: message.as_str().into(),
            extra_headers: Vec::new(),
        };
        let id = built.add_object(Kind::Commit, &commit);
        self.persist(built.objects)?;
        Ok(Staged {
            id,
            name,
            expected: parent.filter(|_| !fork),
            fork,
        })
    }

    /// A commit, decoded; `buf` holds its bytes.
    pub(crate) fn find_commit<'a>(
        &self,
        id: ObjectId,
        buf: &'a mut Vec<u8>,
    ) -> Result<gix::objs::CommitRef<'a>, RecordError> {
        self.objects
            .find_commit(&id, buf)
            .map_err(|e| self.read_error(&format!("commit {id}"), e))
    }

    /// What kind of object `id` is.
    pub(crate) fn object_kind(&self, id: ObjectId) -> Result<gix::objs::Kind, RecordError> {
        use gix::objs::FindHeader;
        match self.objects.try_header(&id) {
            Ok(Some(header)) => Ok(header.kind),
            Ok(None) => Err(RecordError::Missing {
                path: self.path.clone(),
                what: format!("object {id}"),
            }),
            Err(e) => Err(self.read_error(&format!("object {id}"), e)),
        }
    }

    pub(crate) fn tree_of(&self, commit: ObjectId) -> Result<ObjectId, RecordError> {
        let mut buf = Vec::new();
        Ok(self.find_commit(commit, &mut buf)?.tree())
    }

    /// The bytes of `path` in `commit`'s tree, if it is there.
    pub fn read(&self, commit: ObjectId, path: &str) -> Result<Option<Vec<u8>>, RecordError> {
        let (mut buf, mut lookup) = (Vec::new(), Vec::new());
        let tree = self.tree_of(commit)?;
        let entry = self
            .objects
            .find_tree_iter(&tree, &mut buf)
            .and_then(|tree| tree.lookup_entry(&self.objects, &mut lookup, path.split('/')))
            .map_err(|e| self.read_error(&format!("{path} in {commit}"), e))?;
        let Some(entry) = entry.filter(|e| e.mode.is_blob()) else {
            return Ok(None);
        };
        let blob = self
            .objects
            .find_blob(&entry.oid, &mut buf)
            .map_err(|e| self.read_error(&format!("{path} in {commit}"), e))?;
        Ok(Some(blob.data.to_vec()))
    }

    /// The blobs at the top of `commit`'s tree, as `(name, id)` (a commit of the record keeps
    /// its files there).
    pub(crate) fn top_files(
        &self,
        commit: ObjectId,
    ) -> Result<Vec<(String, ObjectId)>, RecordError> {
        let tree = self.tree_of(commit)?;
        let mut buf = Vec::new();
        let entries = self
            .objects
            .find_tree_iter(&tree, &mut buf)
            .map_err(|e| self.read_error(&format!("the tree of {commit}"), e))?;
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| self.read_error(&format!("the tree of {commit}"), e))?;
            if entry.mode.is_blob() {
                out.push((
                    entry.filename.to_str_lossy().into_owned(),
                    entry.oid.to_owned(),
                ));
            }
        }
        Ok(out)
    }

    /// A blob's bytes.
    pub(crate) fn blob(&self, id: ObjectId) -> Result<Vec<u8>, RecordError> {
        let mut buf = Vec::new();
        let blob = self
            .objects
            .find_blob(&id, &mut buf)
            .map_err(|e| self.read_error(&format!("blob {id}"), e))?;
        Ok(blob.data.to_vec())
    }

    /// A commit's message, whole.
    pub(crate) fn commit_message(&self, id: ObjectId) -> Result<String, RecordError> {
        let mut buf = Vec::new();
        let commit = self.find_commit(id, &mut buf)?;
        Ok(commit.message.to_str_lossy().into_owned())
    }

    /// The commits whose id starts with `hex` (at least 4 hex digits).
    pub(crate) fn commits_with_prefix(&self, hex: &str) -> Result<Vec<ObjectId>, RecordError> {
        let Ok(prefix) = gix::hash::Prefix::from_hex(hex) else {
            return Ok(Vec::new());
        };
        let mut candidates = std::collections::HashSet::new();
        self.objects
            .lookup_prefix(prefix, Some(&mut candidates))
            .map_err(|e| self.git(e))?;
        let mut buf = Vec::new();
        let mut out: Vec<ObjectId> = candidates
            .into_iter()
            .filter(|id| {
                gix::objs::Find::try_find(&self.objects, id, &mut buf)
                    .ok()
                    .flatten()
                    .is_some_and(|o| o.kind == Kind::Commit)
            })
            .collect();
        out.sort();
        Ok(out)
    }

    /// Commit times for line tips: from the commit-graph that maintenance writes when it has
    /// the commit (no object to inflate), else from the commit itself.
    pub fn commit_times(&self) -> CommitTimes<'_> {
        let graph =
            gix::commitgraph::Graph::from_info_dir(&self.path.join("objects/info"), HASH).ok();
        CommitTimes {
            record: self,
            graph,
            buf: Vec::new(),
        }
    }

    /// Is `ancestor` `descendant` itself or one of its ancestors?
    pub(crate) fn is_ancestor(
        &self,
        ancestor: ObjectId,
        descendant: ObjectId,
    ) -> Result<bool, RecordError> {
        let mut stack = vec![descendant];
        let mut seen = std::collections::HashSet::new();
        let mut buf = Vec::new();
        while let Some(id) = stack.pop() {
            if id == ancestor {
                return Ok(true);
            }
            if !seen.insert(id) {
                continue;
            }
            stack.extend(self.find_commit(id, &mut buf)?.parents());
        }
        Ok(false)
    }
}

/// Objects made for one commit, not yet written: `(id, kind, encoded bytes)`.
#[derive(Default)]
struct Built {
    objects: Vec<(ObjectId, Kind, Vec<u8>)>,
}

impl Built {
    fn add(&mut self, kind: Kind, data: Vec<u8>) -> ObjectId {
        let id = gix::objs::compute_hash(HASH, kind, &data).expect("SHA-1 hashing cannot fail");
        self.objects.push((id, kind, data));
        id
    }

    fn add_object(&mut self, kind: Kind, object: &impl WriteTo) -> ObjectId {
        let mut data = Vec::new();
        object
            .write_to(&mut data)
            .expect("writing to memory cannot fail");
        self.add(kind, data)
    }
}

/// See [`Record::commit_times`].
pub struct CommitTimes<'r> {
    record: &'r Record,
    graph: Option<gix::commitgraph::Graph>,
    buf: Vec<u8>,
}

impl CommitTimes<'_> {
    /// Seconds since the epoch at which `id` was committed.
    pub fn of(&mut self, id: ObjectId) -> Result<i64, RecordError> {
        if let Some(commit) = self.graph.as_ref().and_then(|g| g.commit_by_id(id)) {
            return Ok(commit.committer_timestamp() as i64);
        }
        // A tip that is no commit anvil can read (a ref git wrote into the record) counts as
        // the oldest: it must not hide the debates around it.
        match self.record.find_commit(id, &mut self.buf) {
            Ok(commit) => Ok(commit.committer().map_or(0, |c| c.seconds())),
            Err(e) => match self.record.object_kind(id) {
                Ok(_) => Ok(0),
                Err(_) => Err(e),
            },
        }
    }
}
