//! Deltas for the packs `anvil gc` writes with gix when there is no `git` binary.
//!
//! gix writes packs but computes no deltas, and a debate's record shrinks mostly through them:
//! each phase's `state.md` and root tree differ from the last one's by a few lines, and every
//! debate's prompts repeat the same instructions. This module fills that gap with the two
//! pieces a packer needs:
//!
//! - [`encode`]: git's delta format (the instructions `index-pack` and every reader apply),
//!   found greedily as git's own `diff-delta` does: the base cut into 16-byte blocks, the
//!   target scanned for them, each match grown both ways.
//! - [`Deltify`]: the choice of bases over the pack's entries, in the order gix counts them
//!   (commit, its tree, then what the tree adds, one line's history after the other): each
//!   blob or tree against the last one met under the same file name, each commit against the
//!   last commit of the same phase (its subject's head, as `round 2 critic`).
//!   Objects are counted newest first, so an older version is stored as a delta of the newer
//!   one, which stays whole; chains stop at [`MAX_DEPTH`], git's default `pack.depth`.
//!
//! Only objects that were loose are turned into deltas: entries copied from an existing pack
//! stay exactly as they were (some are deltas already, or the bases of others).

use std::collections::HashMap;

use gix::ObjectId;
use gix::objs::Kind;
use gix_pack::data::output::{Entry, entry};

/// Longest delta chain, as git's default `pack.depth`.
pub const MAX_DEPTH: u32 = 50;
/// Bytes matched at a time: the block size of the base's index.
const BLOCK: usize = 16;
/// Largest object that is given or used as a delta (both are held in memory whole).
const MAX_OBJECT: usize = 16 << 20;
/// Most file names remembered as bases at once, and most bytes they may hold together
/// (memory stays bounded with odd records: thousands of phases of megabytes each).
const MAX_SLOTS: usize = 4096;
const MAX_HELD: usize = 64 << 20;
/// Longest copy one instruction can hold.
const MAX_COPY: usize = 0xff_ffff;
/// Longest insert one instruction can hold.
const MAX_INSERT: usize = 0x7f;

/// `target` as git delta instructions against `base`, or `None` when they would take `limit`
/// bytes or more (then the target is better stored whole).
pub fn encode(base: &[u8], target: &[u8], limit: usize) -> Option<Vec<u8>> {
    if base.len() > MAX_OBJECT || target.len() > MAX_OBJECT {
        return None;
    }
    let mut out = Vec::with_capacity(limit.min(target.len() / 2 + 16));
    put_size(&mut out, base.len());
    put_size(&mut out, target.len());

    let mut index: HashMap<u128, usize> = HashMap::with_capacity(base.len() / BLOCK);
    for (n, block) in base.chunks_exact(BLOCK).enumerate() {
        index.entry(block_key(block)).or_insert(n * BLOCK);
    }
    let mut pending = 0; // start of the bytes not yet written as an insert or a copy
    let mut at = 0;
    while at + BLOCK <= target.len() {
        let Some(&found) = index.get(&block_key(&target[at..at + BLOCK])) else {
            at += 1;
            // What is inserted costs at least its length.
            if at - pending >= limit {
                return None;
            }
            continue;
        };
        // Grow the match backwards over what would otherwise be inserted, then forwards.
        let (mut from, mut start) = (found, at);
        while start > pending && from > 0 && target[start - 1] == base[from - 1] {
            start -= 1;
            from -= 1;
        }
        let mut end = at + BLOCK;
        while end < target.len()
            && from + (end - start) < base.len()
            && target[end] == base[from + (end - start)]
        {
            end += 1;
        }
        put_insert(&mut out, &target[pending..start]);
        put_copy(&mut out, from, end - start);
        if out.len() >= limit {
            return None;
        }
        pending = end;
        at = end;
    }
    put_insert(&mut out, &target[pending..]);
    (out.len() < limit).then_some(out)
}

fn block_key(block: &[u8]) -> u128 {
    u128::from_le_bytes(block.try_into().expect("a block"))
}

/// A size in the delta header: seven bits at a time, least significant first.
fn put_size(out: &mut Vec<u8>, mut size: usize) {
    loop {
        let byte = (size & 0x7f) as u8;
        size >>= 7;
        if size == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn put_insert(out: &mut Vec<u8>, bytes: &[u8]) {
    for piece in bytes.chunks(MAX_INSERT) {
        out.push(piece.len() as u8);
        out.extend_from_slice(piece);
    }
}

/// Copy instructions for `len` bytes of the base from `offset`: a flag byte saying which of
/// the offset's four bytes and the size's three follow, then the non-zero ones.
fn put_copy(out: &mut Vec<u8>, mut offset: usize, mut len: usize) {
    while len > 0 {
        let size = len.min(MAX_COPY);
        let flags_at = out.len();
        let mut flags = 0x80u8;
        for (bit, byte) in (offset as u32).to_le_bytes().into_iter().enumerate() {
            if byte != 0 {
                flags |= 1 << bit;
                out.push(byte);
            }
        }
        for (bit, byte) in (size as u32).to_le_bytes().into_iter().take(3).enumerate() {
            if byte != 0 {
                flags |= 0x10 << bit;
                out.push(byte);
            }
        }
        out.insert(flags_at, flags);
        offset += size;
        len -= size;
    }
}

/// A whole object kept as the base for the next one of its slot.
struct Base {
    index: usize,
    data: Vec<u8>,
    depth: u32,
}

/// Turns the loose objects among a pack's entries into deltas where that saves space; see
/// the module's documentation. Feed it every entry in the order they are written.
pub struct Deltify {
    /// Entries at positions below this were loose objects (gix writes them first).
    loose: usize,
    /// Entries seen so far: the position of the next one.
    next: usize,
    /// The file names of what the current commit's trees hold: gix counts a commit, then its
    /// trees, then the objects they add, before the next commit.
    names: HashMap<ObjectId, Vec<u8>>,
    /// The last whole object of each kind and file name.
    bases: HashMap<(Kind, Vec<u8>), Base>,
    /// Bytes the bases hold.
    held: usize,
    inflate: gix::zlib::Inflate,
}

impl Deltify {
    /// For a pack whose first `loose` entries are loose objects.
    pub fn new(loose: usize) -> Deltify {
        Deltify {
            loose,
            next: 0,
            names: HashMap::new(),
            bases: HashMap::new(),
            held: 0,
            inflate: gix::zlib::Inflate::default(),
        }
    }

    /// Looks at the next entry, and rewrites it as a delta when one is worth it.
    pub fn entry(&mut self, entry: &mut Entry) {
        let index = self.next;
        self.next += 1;
        let entry::Kind::Base(kind) = entry.kind else {
            return;
        };
        if index >= self.loose || entry.is_invalid() || entry.decompressed_size > MAX_OBJECT {
            return;
        }
        let Some(data) = self.inflated(entry) else {
            return;
        };
        if kind == Kind::Commit {
            self.names.clear();
        }
        if kind == Kind::Tree {
            for child in gix::objs::TreeRefIter::from_bytes(&data, gix::hash::Kind::Sha1)
                .map_while(Result::ok)
            {
                self.names
                    .insert(child.oid.to_owned(), child.filename.to_vec());
            }
        }
        let name = match kind {
            Kind::Commit => subject_head(&data).to_vec(),
            Kind::Tag => Vec::new(),
            Kind::Tree | Kind::Blob => self.names.remove(&entry.id).unwrap_or_default(),
        };
        let slot = (kind, name);
        let mut depth = 0;
        if let Some(base) = self.bases.get(&slot).filter(|base| base.depth < MAX_DEPTH) {
            // As git: a delta must be under half the object, less the deeper its chain.
            let limit = (data.len() / 2).saturating_sub(20) * (MAX_DEPTH - base.depth) as usize
                / MAX_DEPTH as usize;
            // Compressed as gix compresses a whole object, the delta in place of its data.
            let count = gix_pack::data::output::Count::from_data(entry.id, None);
            if let Some(delta) = encode(&base.data, &data, limit)
                && let Ok(smaller) = Entry::from_data(
                    &count,
                    &gix::objs::Data::new(&delta, kind, gix::hash::Kind::Sha1),
                    gix::zlib::Compression::DEFAULT,
                )
                && smaller.compressed_data.len() < entry.compressed_data.len()
            {
                *entry = Entry {
                    kind: entry::Kind::DeltaRef {
                        object_index: base.index,
                    },
                    ..smaller
                };
                depth = base.depth + 1;
            }
        }
        // The newest version becomes its slot's base; when it does not fit, the one before
        // stays (an older base makes a poorer delta, never a wrong one).
        let replaced = self.bases.get(&slot).map(|base| base.data.len());
        let room = replaced.is_some() || self.bases.len() < MAX_SLOTS;
        let held = self.held - replaced.unwrap_or(0) + data.len();
        if room && held <= MAX_HELD {
            self.held = held;
            self.bases.insert(slot, Base { index, data, depth });
        }
    }

    fn inflated(&mut self, entry: &Entry) -> Option<Vec<u8>> {
        let mut data = vec![0; entry.decompressed_size];
        self.inflate.reset();
        let (status, _, written) = self.inflate.once(&entry.compressed_data, &mut data).ok()?;
        (status == gix::zlib::Status::StreamEnd && written == data.len()).then_some(data)
    }
}

/// What a commit's subject says before its first `:`, as `round 3 critic` or `synthesis`: the
/// same phase of another debate shares most of its message, where the phase before it in the
/// same debate shares less.
fn subject_head(commit: &[u8]) -> &[u8] {
    let message = commit
        .windows(2)
        .position(|pair| pair == b"\n\n")
        .map_or(&commit[..0], |at| &commit[at + 2..]);
    let line = message.split(|&b| b == b'\n').next().unwrap_or_default();
    let head = line.split(|&b| b == b':').next().unwrap_or_default();
    &head[..head.len().min(64)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Applies `delta` to `base` as git does, refusing anything malformed.
    fn apply(base: &[u8], delta: &[u8]) -> Option<Vec<u8>> {
        let mut at = 0;
        let mut size = || {
            let mut value = 0usize;
            let mut shift = 0;
            loop {
                let byte = *delta.get(at)?;
                at += 1;
                value |= ((byte & 0x7f) as usize) << shift;
                shift += 7;
                if byte & 0x80 == 0 {
                    return Some(value);
                }
            }
        };
        let (base_len, target_len) = (size()?, size()?);
        if base_len != base.len() {
            return None;
        }
        let mut out = Vec::with_capacity(target_len);
        while at < delta.len() {
            let op = delta[at];
            at += 1;
            if op & 0x80 != 0 {
                let mut field = |bits: std::ops::Range<u8>| {
                    let mut value = 0usize;
                    for (n, bit) in bits.enumerate() {
                        if op & (1 << bit) != 0 {
                            value |= (*delta.get(at)? as usize) << (8 * n);
                            at += 1;
                        }
                    }
                    Some(value)
                };
                let offset = field(0..4)?;
                let len = match field(4..7)? {
                    0 => 0x10000,
                    len => len,
                };
                out.extend_from_slice(base.get(offset..offset + len)?);
            } else if op != 0 {
                out.extend_from_slice(delta.get(at..at + op as usize)?);
                at += op as usize;
            } else {
                return None;
            }
        }
        (out.len() == target_len).then_some(out)
    }

    #[test]
    fn a_phase_added_to_a_state_file_is_a_small_delta() {
        let base: String = (0..40)
            .map(|n| format!("- step {n}: a phase was recorded\n"))
            .collect();
        let target = base.replace("step 3:", "step 3 (amended):") + "- step 40: the synthesis\n";
        let delta = encode(base.as_bytes(), target.as_bytes(), usize::MAX).unwrap();
        assert!(delta.len() < 80, "{} bytes", delta.len());
        assert_eq!(apply(base.as_bytes(), &delta).unwrap(), target.as_bytes());
    }

    #[test]
    fn nothing_in_common_is_refused_under_the_limit() {
        let base = vec![b'a'; 4000];
        let target: Vec<u8> = (0..4000u32).map(|n| (n * 7 % 251) as u8).collect();
        assert_eq!(encode(&base, &target, target.len() / 2), None);
        let whole = encode(&base, &target, usize::MAX).unwrap();
        assert_eq!(apply(&base, &whole).unwrap(), target);
    }

    #[test]
    fn copies_longer_than_one_instruction_and_far_offsets_are_split_right() {
        let mut base = vec![0u8; 0x1ff_ffff + 100];
        for (n, byte) in base.iter_mut().enumerate() {
            *byte = (n % 253) as u8 ^ (n >> 16) as u8;
        }
        let target = [&base[3..], b"tail"].concat();
        // Over MAX_OBJECT: refused, as it is not worth holding in memory.
        assert_eq!(encode(&base, &target, usize::MAX), None);
        let base = &base[..MAX_OBJECT];
        // The whole base: one copy longer than an instruction holds.
        let delta = encode(base, base, usize::MAX).unwrap();
        assert!(delta.len() < 32, "{} bytes", delta.len());
        assert_eq!(apply(base, &delta).unwrap(), base);
        // An offset of three bytes, and one with zero bytes among them.
        let target = [
            &base[0xab_cdef..0xab_cdef + 5000],
            b"x",
            &base[0x10..0x2000],
        ]
        .concat();
        let delta = encode(base, &target, usize::MAX).unwrap();
        assert!(delta.len() < 32, "{} bytes", delta.len());
        assert_eq!(apply(base, &delta).unwrap(), target);
    }

    #[test]
    fn each_older_version_is_a_delta_of_the_newer_and_chains_stop_at_the_pack_depth() {
        use gix_pack::data::output::Count;
        // A file that grew a line at each of 120 phases, met newest first as gix counts it.
        let header = "The question, and how the debate is set up.\n".repeat(50);
        let versions: Vec<Vec<u8>> = (0..120)
            .rev()
            .map(|n| {
                let steps: String = (0..=n)
                    .map(|k| format!("- step {k}: a phase was recorded\n"))
                    .collect();
                format!("{header}{steps}").into_bytes()
            })
            .collect();
        let mut deltify = Deltify::new(versions.len());
        let mut depths: Vec<u32> = Vec::new();
        for (n, version) in versions.iter().enumerate() {
            let id = ObjectId::from_bytes_or_panic(&[n as u8 + 1; 20]);
            let data = gix::objs::Data::new(version, Kind::Blob, gix::hash::Kind::Sha1);
            let mut entry = Entry::from_data(
                &Count::from_data(id, None),
                &data,
                gix::zlib::Compression::DEFAULT,
            )
            .unwrap();
            deltify.entry(&mut entry);
            let depth = match entry.kind {
                entry::Kind::Base(kind) => {
                    assert_eq!(kind, Kind::Blob);
                    0
                }
                entry::Kind::DeltaRef { object_index } => {
                    assert!(object_index < n);
                    let delta = deltify.inflated(&entry).unwrap();
                    assert_eq!(apply(&versions[object_index], &delta).unwrap(), *version);
                    depths[object_index] + 1
                }
                entry::Kind::DeltaOid { .. } => panic!("no thin packs here"),
            };
            depths.push(depth);
        }
        assert_eq!(depths.iter().max(), Some(&MAX_DEPTH), "{depths:?}");
        // The newest is whole, and a new chain starts where one reaches the limit.
        assert_eq!(depths.iter().filter(|&&d| d == 0).count(), 3, "{depths:?}");
        assert_eq!(
            depths.iter().filter(|&&d| d > 0).count(),
            versions.len() - 3
        );
    }

    proptest! {
        #[test]
        fn every_delta_gives_back_its_target(
            base in proptest::collection::vec(0u8..4, 0..600),
            edits in proptest::collection::vec((0usize..600, 0usize..40, proptest::collection::vec(any::<u8>(), 0..40)), 0..6),
        ) {
            let mut target = base.clone();
            for (at, cut, insert) in edits {
                let at = at.min(target.len());
                let cut = cut.min(target.len() - at);
                target.splice(at..at + cut, insert);
            }
            let delta = encode(&base, &target, usize::MAX).unwrap();
            prop_assert_eq!(apply(&base, &delta).unwrap(), target);
        }
    }
}
