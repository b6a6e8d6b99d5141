//! The loose-object writer: the Stop hook's objects, compressed through one zlib stream and
//! renamed into place as git does.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::objs::Kind;
use zlib_rs::{Deflate, DeflateConfig, DeflateFlush, Status};

use super::{Record, RecordError, write_error};

impl Record {
    /// Writes objects built in memory as loose objects, all through one compressor (setting one
    /// up per object, as gix's loose-object store does, costs the hook most of its page
    /// faults: `cargo bench --bench hook` writes one phase's objects both ways, and this
    /// writer takes about 0.6 of the time), skipping the ones the record has already.
    pub(super) fn persist(
        &self,
        objects: Vec<(ObjectId, Kind, Vec<u8>)>,
    ) -> Result<(), RecordError> {
        use std::io::Write;
        let dir = self.path.join("objects");
        let mut compressor = compressor();
        let mut loose = Vec::new();
        for (id, kind, data) in objects {
            let target = loose_path(&dir, id);
            let fan_dir = target.parent().expect("a fan-out folder").to_owned();
            // Only the loose copy is looked for: asking the object database about an object
            // it lacks makes it rescan its packs, and a duplicate of a packed object is
            // harmless (git keeps one when it next packs). A loose copy that is there may be
            // an unreachable leftover that `git gc` is about to prune as old: it is made young
            // again, as git does, so that it outlives the commit that now needs it.
            if freshen(&target) {
                continue;
            }
            let mut raw = gix::objs::encode::loose_header(kind, data.len() as u64).to_vec();
            raw.extend_from_slice(&data);
            deflate(&mut compressor, &raw, &mut loose)
                .map_err(|e| write_error(&target, std::io::Error::other(e)))?;
            // Written next to where it lands, as git does (and named like git's, so that
            // `git prune` cleans up after a writer that died): a rename within one folder.
            let mut builder = tempfile::Builder::new();
            builder.prefix("tmp_obj_");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                builder.permissions(std::fs::Permissions::from_mode(0o444));
            }
            // The fan-out folders are made with the record; one may be missing from a record
            // that git wrote or packed, and `git gc` (anvil gc) removes the ones it empties,
            // possibly right after this writer made one again: made again, a few times.
            let mut attempts = 0;
            let file = loop {
                match builder.tempfile_in(&fan_dir) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempts < 10 => {
                        attempts += 1;
                        if let Err(e) = std::fs::create_dir_all(&fan_dir) {
                            break Err(e);
                        }
                    }
                    other => break other,
                }
            };
            file.and_then(|mut file| {
                crate::fault::point("writing an object")?;
                file.write_all(&loose)?;
                file.persist(&target).map_err(|e| e.error)
            })
            .map_err(|e| write_error(&target, e))?;
        }
        Ok(())
    }
}

/// Sets the modification time of the loose object at `path` to now; `false` when there is no
/// such file or its time cannot be set (then the object is written again).
fn freshen(path: &Path) -> bool {
    std::fs::File::open(path)
        .and_then(|file| file.set_modified(std::time::SystemTime::now()))
        .is_ok()
}

/// The compressor for loose objects: zlib's fastest level, as git's `core.compression=1`,
/// with an 8 KB window and small symbol buffers instead of the 32 KB and 64 KB defaults.
/// A phase's files are a few KB, so they compress to the same size, and a fresh process
/// zeroes and faults in a quarter less memory: a third less time for a commit's objects.
fn compressor() -> Deflate {
    let mut config = DeflateConfig::new(1);
    config.window_bits = 13;
    config.mem_level = 4;
    Deflate::new_with_config(config)
}

/// Compresses `input` into `out` (cleared first) as one zlib stream.
fn deflate(compressor: &mut Deflate, input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    compressor.reset();
    out.clear();
    let mut rest = input;
    loop {
        let (read, written) = (compressor.total_in(), compressor.total_out());
        let filled = out.len();
        out.resize(filled + rest.len() + 64, 0);
        let status = compressor
            .compress(rest, &mut out[filled..], DeflateFlush::Finish)
            .map_err(|e| format!("cannot compress an object: {e:?}"))?;
        out.truncate(filled + (compressor.total_out() - written) as usize);
        rest = &rest[(compressor.total_in() - read) as usize..];
        if status == Status::StreamEnd {
            return Ok(());
        }
    }
}

/// Where object `id` is stored loose under `objects` (the record's `objects` folder): its
/// fan-out folder, named by the first two hex digits, then the other 38.
pub(crate) fn loose_path(objects: &Path, id: ObjectId) -> PathBuf {
    let hex = id.to_hex().to_string();
    let (fan, rest) = hex.split_at(2);
    objects.join(fan).join(rest)
}
