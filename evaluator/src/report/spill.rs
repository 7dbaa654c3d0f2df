//! The outcomes of a report over many bundles, kept in a temporary file while it is
//! graded and read back one check at a time when it is rendered.
//!
//! A report is check-centric (per check, every server's result) while grading is
//! server-centric (per bundle, every check's result), so a renderer that wrote results as
//! they arrive would have to hold every server's results until the last bundle is graded.
//! That was the cost of many bundles: about 90 KiB of outcomes per example bundle, 1 GiB
//! for 10,000 (docs/performance.md, "Grader memory"). [`Spill`] writes each outcome to a
//! temporary file as its server is graded ([`Spill::server`]), with the server's
//! summary ([`super::Server`]), and keeps only where they are (per server an offset,
//! the summary's length and each check's; per batch of servers, below, where it starts
//! and where each check row's outcomes start in it), each verdict ([`super::Row::verdicts`]: the
//! matrix, the counts, the waivers and the exit status need nothing else) and the
//! server's [`super::ServerKey`]. The servers' summaries are read back in order,
//! [`super::WALK`] at a time ([`super::Report::each_server`]). A renderer
//! walks one check's outcomes with [`super::Report::each_outcome`], which reads back only
//! the servers it wants, [`super::WALK`] at a time (or a range with
//! [`super::Report::outcomes_range`], or one server's with
//! [`super::Report::server_outcomes`]), so it never holds a whole check's outcomes. (The
//! JSON report's results, already rendered, are the one exception, and a bounded one: a
//! check's results of at most [`WHOLE_ROW`] bytes in all are read whole, below.)
//!
//! What the file keeps of each outcome is its [`Form`], chosen when it is created: the
//! outcome itself, which any renderer reads back ([`Form::Outcomes`],
//! [`Form::OutcomesBatched`]), or for the JSON report the bytes that report writes for it
//! ([`Form::Json`]), made once on the grading worker and copied when the report is
//! written, never parsed back. A spill file of outcomes refuses to be read as JSON
//! results and the other way round ([`Spill::server_encoded`], [`Spill::row`],
//! [`Spill::json_read`]).
//!
//! A file of [`Form::Json`] keeps each distinct reduction of a check row once: across
//! servers a check's reduction (the sentence on what a black-box probe cannot reach)
//! takes one to three values, and written with every result it was about a fifth of
//! the file's bytes, written and read back again. The writer of the results names where
//! it wrote each reduction ([`WriteResult`]); a reduction equal, byte for byte, to one
//! kept for its row (or kept now, while there is room: `KEEP_PER_ROW` a row,
//! `KEEP_BYTES` in all) is taken out of the result's bytes, which then start with a
//! mark naming it and where it goes (`KEPT`); a reduction past those limits, or no
//! longer than the mark, stays in place. The kept reductions are held in memory, escaped
//! as the report writes them, and never written to the file; the JSON renderer copies
//! them back into place as it copies the results into the report ([`KeptRow::pieces`]).
//!
//! This is done on the thread that writes the file ([`Spill::server_encoded`]), which
//! owns the kept reductions: nothing is shared between the `--jobs` workers or locked,
//! and the file is the same whatever their number. There it costs a length check and a
//! comparison of bytes per result, and copying a server into its batch in pieces (each
//! result whole, or the mark and the two sides of its reduction) where it was one copy;
//! against that, the bytes taken out are neither copied into the batch, nor written,
//! read back and copied out of the file, and a report over many bundles runs fewer
//! instructions than when every reduction was written. Done on the grading workers,
//! before the reduction is escaped, it would also save escaping the text again, but
//! every worker would look each reduction up in a table shared under a lock, and which
//! of two equal reductions is kept would depend on which worker came first.
//!
//! How the file is laid out follows its form. A file of [`Form::Outcomes`] is server by
//! server: each server's summary, then its outcomes in check-row order, then the next
//! server's; one server's outcomes (JUnit, XCCDF) are next to each other. A file of
//! [`Form::Json`] or [`Form::OutcomesBatched`], for a renderer that reads a check row at
//! a time on many servers, is written in transposed batches: the servers as they are given are held (their encoded bytes copied
//! into one buffer, up to `BATCH_BYTES` or `BATCH_SERVERS` servers) and written together,
//! their summaries, then check row 0's outcome on each of them, then row 1's, and so on
//! (a row without an outcome takes no bytes). One row's outcomes on servers given one
//! after the other are then next to each other, where server by server they were a
//! whole server's outcomes apart (tens of KiB for an example bundle). The report's order
//! (by endpoint, then bundle path, [`Spill::reorder`]) is the order given wherever the
//! bundles are graded in that order; where it is not, each outcome is read on its own,
//! as server by server. A server of `BATCH_BYTES` or more is written at once, server by
//! server; [`Spill::seal`] writes the batch pending. Outcomes that are next to each other
//! in the file (a server's, a batch's summaries, a row's on servers of one batch) are read
//! with one `pread` of up to `RUN` bytes. The JSON results of a row are read in the
//! file's order whatever the order of the servers asked for, and a row of at most
//! [`WHOLE_ROW`] bytes is read whole at its first read and kept until another row is
//! read: with the bundles given in an order other than the report's, each result of a
//! piece of the report would otherwise be a `pread` of its own.
//!
//! The file is created in the system temporary directory (or the directory given, next to
//! `-o`), only by this process (`create_new`, 0600 on Unix), and removed when the
//! [`Spill`] is dropped, on success and error alike; on Unix it is unlinked as soon as it
//! is open, so not even a killed process leaves it behind.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::server::{BaselineInfo, BaselineMode, Server};
use crate::timestamp::{StampFailure, Step, Timestamp, TimestampState};
use crate::verdict::{NotArisen, Outcome, SubOutcome, SubVerdict, Verdict};
use mcp_probe_schema::model::{RunStatus, Transport};

/// A spill file could not be created, written or read back.
#[derive(Debug, thiserror::Error)]
#[error("spill file {}: {source}", path.display())]
pub struct SpillError {
    /// The spill file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// What a spill file keeps of each outcome, chosen when it is created ([`Spill::create`]).
#[derive(Debug, Clone, Copy)]
pub enum Form {
    /// The outcome itself (and the transcript excerpts of its records), read back as an
    /// [`Outcome`] by any renderer, laid out server by server: for a renderer that reads
    /// one server's outcomes at a time, or one outcome at a time.
    Outcomes,
    /// [`Form::Outcomes`] in transposed batches (see the module's docs): the same bytes
    /// of each outcome, read back the same way, for a renderer that reads one check
    /// row's outcomes on many servers at a time (`super::spill_form` picks it by format).
    OutcomesBatched,
    /// The JSON report's part of the outcome's result, from `"verdict"` through
    /// `"details"`, as the function given writes it (the JSON renderer's: this module
    /// knows no renderer, `super::spill_form` picks it), copied into the report by that
    /// renderer; it cannot be read back as an [`Outcome`].
    Json(WriteResult),
}

/// Appends what a spill file of [`Form::Json`] keeps of an outcome, and says where in
/// `out` it wrote the outcome's reduction (escaped, quotes and all), if it names it: a
/// reduction named is kept once per check row ([`Spill::kept_row`]). What it writes
/// never starts with a NUL byte (JSON text does not), the mark of a result whose
/// reduction is kept.
pub type WriteResult =
    fn(&mut Vec<u8>, &Outcome) -> std::io::Result<Option<std::ops::Range<usize>>>;

impl Form {
    fn name(self) -> &'static str {
        match self {
            Form::Outcomes | Form::OutcomesBatched => "outcomes",
            Form::Json(_) => "JSON results",
        }
    }

    /// True for [`Form::Json`].
    pub fn is_json(self) -> bool {
        matches!(self, Form::Json(_))
    }
}

/// Where one outcome is in the file: offset and length.
type Place = (u64, u32);

/// Where one server's record is in the file: its summary, and its outcomes among its
/// batch's ([`Batch`]), located from its rows' lengths, kept with every other server's in
/// one vector ([`Spill::lens`]). 24 bytes a server and 4 a check row, and per batch
/// 32 bytes and (transposed) 4 a check row, in four vectors: the index is what the spill file keeps in
/// memory for every server of the fleet, and it is not made of an allocation per server.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    /// Where the server's summary is.
    at: u64,
    /// Where its rows' lengths start in [`Spill::lens`].
    lens_at: u64,
    /// The length of the server's summary ([`super::Server`]).
    summary: u32,
    /// Its batch's number in [`Spill::batches`].
    batch: u32,
}

/// Servers written to the file together, every one with the same number of check rows,
/// in one of two layouts. Transposed ([`Form::Json`], [`Form::OutcomesBatched`]): their summaries one after the
/// other, then check row 0's outcome of each server in the order they were given, then
/// row 1's, and so on (a row without an outcome takes no bytes), and per row where its
/// outcomes start ([`Spill::starts`]). Server by server ([`Form::Outcomes`], and a server
/// of the other forms too large for a batch, [`BATCH_BYTES`]; `starts_at` is
/// [`SERVER_MAJOR`]): each server's summary and then its outcomes in row order, the
/// next server after it; servers given one after the other with the same number of rows
/// are all one such batch. A transposed batch of one server has the same bytes as the
/// server by server layout.
#[derive(Debug, Clone, Copy)]
struct Batch {
    /// Where it starts in the file (transposed: its first server's summary).
    at: u64,
    /// Where its rows' starts are in [`Spill::starts`]: per row, where that row's
    /// outcomes start, from [`Batch::at`] ([`SERVER_MAJOR`]: none, the batch is server by
    /// server).
    starts_at: u64,
    /// Where its first server's rows' lengths start in [`Spill::lens`]; the others' follow,
    /// `rows` each.
    lens_at: u64,
    /// How many check rows each of its servers has.
    rows: u32,
}

/// [`Batch::starts_at`] of a batch laid out server by server.
const SERVER_MAJOR: u64 = u64::MAX;

/// The length of a row without an outcome ([`encode_server`] refuses an outcome this long).
const NONE: u32 = u32::MAX;

/// The temporary file of a report's outcomes and the index of where each one is.
#[derive(Debug)]
pub struct Spill {
    path: PathBuf,
    /// The writer while grading; `None` once [`Spill::seal`]ed.
    writer: Option<BufWriter<File>>,
    /// The reader while rendering (a renderer holds `&Report`; several threads may read
    /// at once: `pread` on Unix, a seek and a read under [`Spill::seek`] elsewhere).
    reader: File,
    /// Held across a seek and its read where there is no `pread`.
    #[cfg_attr(unix, allow(dead_code))]
    seek: Mutex<()>,
    /// Bytes written so far (the servers waiting in [`Spill::pending`] not among them).
    end: u64,
    /// Per server (in the order given to [`Spill::server`], then as [`Spill::reorder`]
    /// put them): where its record is.
    index: Vec<Entry>,
    /// Every server's rows' lengths, in the order the servers were given.
    lens: Vec<u32>,
    /// Every batch written, in the order written.
    batches: Vec<Batch>,
    /// Every transposed batch's rows' starts (from the batch's start: a batch is never
    /// 4 GiB), in the order the batches were written.
    starts: Vec<u32>,
    /// The bytes of the servers of the batch not yet written, each as encoded
    /// ([`encode_server`]), one after the other in the order given: they are the last
    /// [`Spill::pending_servers`] of [`Spill::index`].
    pending: Vec<u8>,
    /// How many servers [`Spill::pending`] holds.
    pending_servers: usize,
    /// Their summaries' bytes in all.
    pending_summaries: u64,
    /// What the file keeps of each outcome.
    form: Form,
    /// The most servers and the most bytes of a transposed batch ([`Batch`]), or `None`
    /// when the file is laid out server by server (from its form, [`batch_limits`]).
    batch: Option<(usize, usize)>,
    /// Per check row, the bytes of its outcomes on every server written so far.
    row_bytes: Vec<u64>,
    /// The most bytes of a row of JSON results read whole ([`WHOLE_ROW`]).
    whole_limit: u64,
    /// The row of JSON results read whole last ([`Spill::json_read`]).
    whole: Mutex<Option<Arc<WholeRow>>>,
    /// Reads of the file so far (tests count them).
    #[cfg(test)]
    reads: std::sync::atomic::AtomicUsize,
    /// The reductions kept once ([`Form::Json`]; see the module's docs): their escaped
    /// bytes one after the other, at most [`Spill::keep`]'s bytes.
    kept: Vec<u8>,
    /// Per check row, where each of its kept reductions is in [`Spill::kept`] (offset
    /// and length), numbered in the order kept.
    kept_rows: Vec<Vec<(u32, u32)>>,
    /// The most reductions kept for one row and the most bytes of them in all
    /// ([`KEEP_PER_ROW`], [`KEEP_BYTES`]).
    keep: (usize, usize),
    /// Per row of the server being written, the number of its reduction among the row's
    /// kept ones ([`NOT_KEPT`]: left in place), from [`Spill::keep_reductions`].
    ids: Vec<u8>,
}

/// The most bytes of one check row's JSON results that [`Spill::json_read`] reads
/// whole, at its first read, and keeps until another row is read (4 MiB): about 1,700
/// servers' results of the longest check of the example bundles, about 7,000 of the
/// shortest. A report walks a row's
/// servers in the report's order (by endpoint, then bundle path), which is the order
/// they were written in only when the bundles were given in that order; otherwise the
/// results a piece of the report wants are scattered over the file's batches, and read
/// one `pread` each (one a result: about 34 a bundle; over 1,400 example bundles given
/// out of that order a profile put those reads at about 3.5 % of the time, and at about
/// 1.8 % with rows read whole). Read whole, a row costs one `pread` per run of the file
/// (a batch's part of the row) whatever the order. A longer row (a larger
/// fleet) is read a piece at a time as before, so the memory a report takes for any
/// number of servers stays bounded: at most this row and the one a renderer on another
/// thread still holds.
pub const WHOLE_ROW: u64 = 4 << 20;

/// One check row's JSON results, read whole ([`Spill::json_read`]): their bytes in the
/// file's order, and per server number where its result is in them (start and length).
#[derive(Debug)]
pub struct WholeRow {
    row: usize,
    bytes: Vec<u8>,
    at: Vec<Option<(u32, u32)>>,
}

/// JSON results read back ([`Spill::json_read`]): where each server's is, in the
/// caller's buffer or, for a row read whole ([`WHOLE_ROW`]), in that row, not copied.
#[derive(Debug, Default)]
pub struct JsonRead {
    /// The row read whole the results are in; `None`: they are in the caller's buffer.
    whole: Option<Arc<WholeRow>>,
    /// Per server, in server order, where its result is (`None`: it has none).
    pub at: Vec<Option<std::ops::Range<usize>>>,
}

impl JsonRead {
    /// The bytes [`JsonRead::at`] points into: the row read whole, or `buf`, the buffer
    /// given to [`Spill::json_read`].
    pub fn bytes<'a>(&'a self, buf: &'a [u8]) -> &'a [u8] {
        self.whole.as_ref().map_or(buf, |w| &w.bytes)
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        // Already unlinked on Unix; elsewhere this is where it goes.
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Spill {
    /// Create the spill file in `dir` (the system temporary directory when `None`), to
    /// keep each outcome in `form`.
    pub fn create(dir: Option<&Path>, form: Form) -> Result<Spill, SpillError> {
        let dir = dir.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut last = None;
        for attempt in 0..16u32 {
            let path = dir.join(format!(
                ".mcp-grade-{}-{stamp:x}-{attempt}.spill",
                std::process::id()
            ));
            let mut o = std::fs::OpenOptions::new();
            o.read(true).write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
            match o.open(&path) {
                Ok(file) => {
                    let err = |source| SpillError {
                        path: path.clone(),
                        source,
                    };
                    let reader = file.try_clone().map_err(err)?;
                    #[cfg(unix)]
                    std::fs::remove_file(&path).map_err(err)?;
                    return Ok(Spill {
                        path,
                        // A server's outcomes arrive encoded whole (tens of KiB for
                        // a full bundle's), and a write at least this large goes to
                        // the file directly: the buffer gathers only small servers'
                        // and never holds a copy of a large one.
                        writer: Some(BufWriter::with_capacity(WRITE_BUFFER, file)),
                        reader,
                        seek: Mutex::new(()),
                        end: 0,
                        index: Vec::new(),
                        lens: Vec::new(),
                        batches: Vec::new(),
                        starts: Vec::new(),
                        pending: Vec::new(),
                        pending_servers: 0,
                        pending_summaries: 0,
                        form,
                        batch: batch_limits(form),
                        row_bytes: Vec::new(),
                        whole_limit: WHOLE_ROW,
                        whole: Mutex::new(None),
                        #[cfg(test)]
                        reads: Default::default(),
                        kept: Vec::new(),
                        kept_rows: Vec::new(),
                        keep: (KEEP_PER_ROW, KEEP_BYTES),
                        ids: Vec::new(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(path),
                Err(source) => return Err(SpillError { path, source }),
            }
        }
        Err(SpillError {
            path: last.unwrap_or(dir),
            source: std::io::Error::other("no unused name for a spill file"),
        })
    }

    /// Make room in the index for `servers` more servers of `rows` check rows each (a
    /// grading run knows how many inputs it has): its per-server vectors are then never
    /// grown by doubling and copying, which over 10,000 servers held the old and the new
    /// vectors at once (its per-batch ones, a batch of many servers, are small and grow
    /// as batches are written).
    pub fn reserve(&mut self, servers: usize, rows: usize) {
        self.index.reserve_exact(servers);
        self.lens.reserve_exact(servers.saturating_mul(rows));
    }

    /// The spill file's path (already unlinked on Unix).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the file keeps of each outcome.
    pub fn form(&self) -> Form {
        self.form
    }

    /// An error unless the file keeps its outcomes as JSON results (`json`) or as
    /// outcomes (not `json`): a read of one form from a file of the other is refused,
    /// never misread.
    fn expect_form(&self, json: bool) -> Result<(), SpillError> {
        if self.form.is_json() == json {
            return Ok(());
        }
        let want = if json { "JSON results" } else { "outcomes" };
        Err(self.err(std::io::Error::other(format!(
            "it holds {}, not {want}",
            self.form.name()
        ))))
    }

    fn err(&self, source: std::io::Error) -> SpillError {
        SpillError {
            path: self.path.clone(),
            source,
        }
    }

    /// Write one server: its summary, then its outcomes, one per check row (`None`: no
    /// outcome), in the file's [`Form`], each with the `excerpts` of its records (the
    /// HTML report's transcript excerpts; empty for the other formats, and not kept in
    /// [`Form::Json`]); returns the server's number in the spill.
    pub fn server(
        &mut self,
        server: &Server,
        outcomes: Vec<Option<Outcome>>,
        excerpts: &Excerpts,
    ) -> Result<usize, SpillError> {
        self.server_encoded(encode_server(self.form, server, &outcomes, excerpts))
    }

    /// Write one server's outcomes already encoded ([`encode_server`], on any thread);
    /// returns the server's number in the spill. A server encoded in another [`Form`]
    /// than the file's is refused.
    pub fn server_encoded(
        &mut self,
        encoded: std::io::Result<Encoded>,
    ) -> Result<usize, SpillError> {
        let mut encoded = encoded.map_err(|e| self.err(e))?;
        if encoded.form.is_json() != self.form.is_json() {
            return Err(self.err(std::io::Error::other(format!(
                "a server encoded as {} cannot be written to a file of {}",
                encoded.form.name(),
                self.form.name()
            ))));
        }
        if self.writer.is_none() {
            return Err(self.err(std::io::Error::other("the spill file is sealed")));
        }
        let rows = u32::try_from(encoded.lens.len())
            .map_err(|_| self.err(std::io::Error::other("over 4 billion check rows")))?;
        // Its bytes once the reductions kept are taken out.
        let size = self.keep_reductions(&mut encoded);
        // In a file of transposed batches, a server whose bytes alone reach a batch's
        // is written at once, server by server.
        let batched = self.batch.filter(|(_, bytes)| size < *bytes);
        // The batch pending is written first when the server does not join it: it is
        // not batched, has other rows (a batch's servers all have the same), or would
        // take the batch past its bytes.
        if self.pending_servers > 0
            && batched.is_none_or(|(_, bytes)| {
                self.batches.last().is_some_and(|b| b.rows != rows)
                    || self.pending.len() + size > bytes
            })
        {
            self.flush_batch()?;
        }
        let lens_at = self.lens.len() as u64;
        // A new batch, unless the server joins the one pending or the server by server
        // one it follows.
        let joins = match batched {
            Some(_) => self.pending_servers > 0,
            None => self
                .batches
                .last()
                .is_some_and(|b| b.starts_at == SERVER_MAJOR && b.rows == rows),
        };
        if !joins {
            self.batches.push(Batch {
                at: self.end,
                starts_at: match batched {
                    Some(_) => self.starts.len() as u64,
                    None => SERVER_MAJOR,
                },
                lens_at,
                rows,
            });
        }
        let batch = u32::try_from(self.batches.len() - 1)
            .map_err(|_| self.err(std::io::Error::other("over 4 billion batches")))?;
        self.index.push(Entry {
            at: self.end + self.pending_summaries,
            lens_at,
            summary: encoded.summary,
            batch,
        });
        self.lens
            .extend(encoded.lens.iter().map(|l| l.unwrap_or(NONE)));
        if self.row_bytes.len() < encoded.lens.len() {
            self.row_bytes.resize(encoded.lens.len(), 0);
        }
        for (total, len) in self.row_bytes.iter_mut().zip(&encoded.lens) {
            *total += len.map_or(0, u64::from);
        }
        let Some((servers, bytes)) = batched else {
            // A server this large is rare: taken apart into a buffer of its own when a
            // reduction is kept.
            let server_bytes = if size == encoded.bytes.len() {
                encoded.bytes
            } else {
                let mut v = Vec::with_capacity(size);
                put_kept(&encoded, &self.ids, &mut v);
                v
            };
            let written = match self.writer.as_mut() {
                Some(w) => w.write_all(&server_bytes),
                None => Err(std::io::Error::other("the spill file is sealed")),
            };
            written.map_err(|e| self.err(e))?;
            self.end += size as u64;
            return Ok(self.index.len() - 1);
        };
        // Copied, so that what the server was encoded into is freed as before, into the
        // batch's buffer, made once and used again for each batch.
        if self.pending.capacity() < bytes {
            self.pending.reserve_exact(bytes - self.pending.len());
        }
        if size == encoded.bytes.len() {
            self.pending.extend_from_slice(&encoded.bytes);
        } else {
            put_kept(&encoded, &self.ids, &mut self.pending);
        }
        self.pending_servers += 1;
        self.pending_summaries += u64::from(encoded.summary);
        if self.pending_servers >= servers || self.pending.len() >= bytes {
            self.flush_batch()?;
        }
        Ok(self.index.len() - 1)
    }

    /// Decide which reductions `encoded` names are taken out of it: each one kept for
    /// its row, or kept now (room left under [`Spill::keep`]), and longer than the mark
    /// that stands for it. Its rows' lengths become those of the outcomes without them
    /// (the mark of a kept reduction, [`KEPT`], the reduction's number among its row's,
    /// and where it goes in the outcome's bytes, [`KEPT_HEAD`] bytes in all, then the
    /// outcome's bytes without it); which one each row's is, is left in [`Spill::ids`]
    /// for [`put_kept`], which copies them so. Compared with the row's kept ones by
    /// length, then bytes. Returns the server's bytes without them.
    fn keep_reductions(&mut self, encoded: &mut Encoded) -> usize {
        let mut size = encoded.bytes.len();
        self.ids.clear();
        if encoded.reductions.is_empty() {
            return size;
        }
        let Encoded {
            bytes,
            summary,
            lens,
            reductions,
            ..
        } = encoded;
        let mut at = *summary as usize;
        for (row, (len, &(start, n))) in lens.iter_mut().zip(reductions.iter()).enumerate() {
            let Some(len) = len else {
                self.ids.push(NOT_KEPT);
                continue;
            };
            let whole = *len as usize;
            let (start, n) = (at + start as usize, n as usize);
            let id = if n > KEPT_HEAD {
                self.kept_id(row, &bytes[start..start + n])
            } else {
                None
            };
            at += whole;
            let Some(id) = id else {
                self.ids.push(NOT_KEPT);
                continue;
            };
            self.ids.push(id);
            *len = (whole - n + KEPT_HEAD) as u32;
            size -= n - KEPT_HEAD;
        }
        size
    }

    /// The number of `escaped` among the reductions kept for row `row`, kept now if it
    /// is not and there is room ([`Spill::keep`]); `None` when there is none.
    fn kept_id(&mut self, row: usize, escaped: &[u8]) -> Option<u8> {
        if self.kept_rows.len() <= row {
            self.kept_rows.resize_with(row + 1, Vec::new);
        }
        let list = &mut self.kept_rows[row];
        for (k, &(at, len)) in list.iter().enumerate() {
            if len as usize == escaped.len()
                && self.kept[at as usize..at as usize + len as usize] == *escaped
            {
                return Some(k as u8);
            }
        }
        let (per_row, bytes) = self.keep;
        if list.len() >= per_row.min(usize::from(NOT_KEPT))
            || self.kept.len() + escaped.len() > bytes
        {
            return None;
        }
        let at = u32::try_from(self.kept.len()).ok()?;
        list.push((at, escaped.len() as u32));
        self.kept.extend_from_slice(escaped);
        Some((list.len() - 1) as u8)
    }

    /// The reductions kept once for check row `row` ([`Form::Json`]), which put its
    /// results back together ([`KeptRow::pieces`]).
    pub fn kept_row(&self, row: usize) -> KeptRow<'_> {
        KeptRow {
            kept: &self.kept,
            list: self.kept_rows.get(row).map_or(&[], Vec::as_slice),
        }
    }

    /// The JSON result `stored` of check row `row`, as [`Spill::json_read`] gave it,
    /// in the pieces that make the bytes its writer wrote ([`KeptRow::pieces`]); tests
    /// read results through it.
    #[cfg(test)]
    fn json_pieces<'a>(
        &'a self,
        row: usize,
        stored: &'a [u8],
    ) -> Result<[&'a [u8]; 3], SpillError> {
        self.kept_row(row).pieces(stored).map_err(|e| self.err(e))
    }

    /// Write the servers waiting in [`Spill::pending`] as a batch ([`Batch`]): their
    /// summaries, then per row each server's outcome: one vectored write of slices of
    /// [`Spill::pending`] (more only where the system takes fewer slices or bytes at once).
    fn flush_batch(&mut self) -> Result<(), SpillError> {
        let n = self.pending_servers;
        if n == 0 {
            return Ok(());
        }
        let rows = self.batches.last().map_or(0, |b| b.rows as usize);
        let servers = &self.index[self.index.len() - n..];
        // Each server's rows' lengths.
        let lens = |e: &Entry| {
            let at = e.lens_at as usize;
            &self.lens[at..at + rows]
        };
        // Per row, where its outcomes start in the batch.
        let mut at = self.pending_summaries;
        for r in 0..rows {
            let start = u32::try_from(at)
                .map_err(|_| self.err(std::io::Error::other("a batch of 4 GiB")))?;
            self.starts.push(start);
            at += servers
                .iter()
                .map(|e| lens(e)[r])
                .filter(|l| *l != NONE)
                .map(u64::from)
                .sum::<u64>();
        }
        let pending = &self.pending;
        let written = match self.writer.as_mut() {
            None => Err(std::io::Error::other("the spill file is sealed")),
            // One server: its bytes are already in the batch's order.
            Some(w) if n == 1 => w.write_all(pending),
            Some(w) => {
                let mut slices = Vec::with_capacity(n * (rows + 1));
                // Where each server's bytes start in `pending`, then where its next
                // outcome is.
                let mut from = Vec::with_capacity(n);
                let mut start = 0;
                for e in servers {
                    let end = start + e.summary as usize;
                    slices.push(std::io::IoSlice::new(&pending[start..end]));
                    from.push(end);
                    start = end
                        + lens(e)
                            .iter()
                            .filter(|l| **l != NONE)
                            .map(|l| *l as usize)
                            .sum::<usize>();
                }
                for r in 0..rows {
                    for (e, from) in servers.iter().zip(&mut from) {
                        let len = lens(e)[r];
                        if len != NONE {
                            let to = *from + len as usize;
                            slices.push(std::io::IoSlice::new(&pending[*from..to]));
                            *from = to;
                        }
                    }
                }
                write_all_vectored(w, &mut slices)
            }
        };
        self.end += at;
        self.pending.clear();
        self.pending_servers = 0;
        self.pending_summaries = 0;
        written.map_err(|e| self.err(e))
    }

    /// Where row `row`'s outcome on server `server` is, if it has one: in a transposed
    /// batch after its batch's row start and the outcomes of that row on the servers
    /// before it in the batch; server by server after its summary and its rows before.
    fn place(&self, server: usize, row: usize) -> Option<Place> {
        let e = self.index.get(server)?;
        let b = self.batches.get(e.batch as usize)?;
        let rows = b.rows as usize;
        if row >= rows {
            return None;
        }
        let lens_at = usize::try_from(e.lens_at).ok()?;
        let len = *self.lens.get(lens_at + row)?;
        if len == NONE {
            return None;
        }
        if b.starts_at == SERVER_MAJOR {
            let before: u64 = self.lens[lens_at..lens_at + row]
                .iter()
                .filter(|l| **l != NONE)
                .map(|l| u64::from(*l))
                .sum();
            return Some((e.at + u64::from(e.summary) + before, len));
        }
        let first = usize::try_from(b.lens_at).ok()?;
        let before: u64 = self
            .lens
            .get(first + row..lens_at + row)?
            .iter()
            .step_by(rows)
            .filter(|l| **l != NONE)
            .map(|l| u64::from(*l))
            .sum();
        let start = *self.starts.get(usize::try_from(b.starts_at).ok()? + row)?;
        let start = b.at + u64::from(start);
        Some((start + before, len))
    }

    /// Where each row's outcome on server `server` is, in row order (none when there is
    /// no such server).
    fn places(&self, server: usize) -> impl Iterator<Item = Option<Place>> + use<'_> {
        let rows = self
            .index
            .get(server)
            .and_then(|e| self.batches.get(e.batch as usize))
            .map_or(0, |b| b.rows as usize);
        (0..rows).map(move |r| self.place(server, r))
    }

    /// Write the batch not yet written and flush what was written: from now on the
    /// outcomes are read back.
    pub fn seal(&mut self) -> Result<(), SpillError> {
        if self.writer.is_some() {
            self.flush_batch()?;
            self.pending = Vec::new();
        }
        if let Some(mut w) = self.writer.take() {
            w.flush().map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// Put the servers in a new order: `order[k]` is the spill number of the server that
    /// is now `k`.
    pub fn reorder(&mut self, order: &[usize]) {
        // A row read whole holds its results by server number.
        if let Ok(whole) = self.whole.get_mut() {
            *whole = None;
        }
        self.index = order
            .iter()
            .map(|&n| {
                // No such server: no summary, and no batch, so no outcomes.
                self.index.get(n).copied().unwrap_or(Entry {
                    batch: u32::MAX,
                    ..Entry::default()
                })
            })
            .collect();
    }

    /// The summaries of the servers `servers` (a range of server numbers, cut to those
    /// there are), in server order, read back from the file.
    pub fn summaries(&self, servers: std::ops::Range<usize>) -> Result<Vec<Server>, SpillError> {
        let end = servers.end.min(self.index.len());
        let places: Vec<Option<Place>> = self.index[servers.start.min(end)..end]
            .iter()
            .map(|e| Some((e.at, e.summary)))
            .collect();
        let mut out = Vec::with_capacity(places.len());
        self.each_place(&places, |bytes| {
            out.push(decode_summary(bytes.unwrap_or_default()).map_err(|e| self.err(e))?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The outcome of every check row on server `server` (`None`: it has none), read
    /// back from the file.
    pub fn server_outcomes(&self, server: usize) -> Result<Vec<Option<Outcome>>, SpillError> {
        Ok(without_excerpts(self.read(self.places(server))?))
    }

    /// The outcome of check row `row` on server `server`, with the excerpts of its
    /// records, read back from the file (`None`: it has none).
    pub fn outcome(
        &self,
        server: usize,
        row: usize,
    ) -> Result<Option<(Outcome, Excerpts)>, SpillError> {
        let place = self.place(server, row);
        Ok(self.read(std::iter::once(place))?.pop().flatten())
    }

    /// The outcome of check row `row` on every server, in server order (`None`: that
    /// server has none), read back from the file.
    pub fn row(&self, row: usize) -> Result<Vec<Option<Outcome>>, SpillError> {
        self.row_range(row, 0..usize::MAX)
    }

    /// The outcome of check row `row` on the servers `servers` (a range of server
    /// numbers, cut to those there are), in server order, read back from the file.
    pub fn row_range(
        &self,
        row: usize,
        servers: std::ops::Range<usize>,
    ) -> Result<Vec<Option<Outcome>>, SpillError> {
        let end = servers.end.min(self.index.len());
        Ok(without_excerpts(self.read(
            (servers.start.min(end)..end).map(|n| self.place(n, row)),
        )?))
    }

    /// The outcome of check row `row` on each of the servers `servers` (server numbers,
    /// in the order given), read back from the file (`None`: that server has none).
    pub fn outcomes_at(
        &self,
        row: usize,
        servers: &[usize],
    ) -> Result<Vec<Option<Outcome>>, SpillError> {
        Ok(without_excerpts(
            self.read(servers.iter().map(|&n| self.place(n, row)))?,
        ))
    }

    /// [`Spill::row`], each outcome with the excerpts of its records.
    pub fn row_and_excerpts(
        &self,
        row: usize,
    ) -> Result<Vec<Option<(Outcome, Excerpts)>>, SpillError> {
        self.read((0..self.index.len()).map(|n| self.place(n, row)))
    }

    /// [`Spill::json_read`], each result copied into `buf` (a row read whole too): per
    /// server where its result is in `buf`. Tests read results through it.
    #[cfg(test)]
    fn json_range(
        &self,
        row: usize,
        servers: std::ops::Range<usize>,
        buf: &mut Vec<u8>,
    ) -> Result<Vec<Option<std::ops::Range<usize>>>, SpillError> {
        let read = self.json_read(row, servers, buf)?;
        let Some(whole) = read.whole else {
            return Ok(read.at);
        };
        buf.clear();
        buf.reserve(read.at.iter().flatten().map(|r| r.len()).sum());
        Ok(read
            .at
            .into_iter()
            .map(|r| {
                r.map(|r| {
                    let from = buf.len();
                    buf.extend_from_slice(&whole.bytes[r]);
                    from..buf.len()
                })
            })
            .collect())
    }

    /// The JSON results ([`Form::Json`]) of check row `row` on the servers `servers` (a
    /// range of server numbers, cut to those there are): per server, in server order,
    /// where its result is (`None`: that server has none), in `buf` (replacing what it
    /// held) or, for a row of at most [`WHOLE_ROW`] bytes, read whole at its first read,
    /// in that row, not copied ([`JsonRead::bytes`]). Each result as the file keeps it:
    /// one whose reduction is kept once for the row is made whole by
    /// [`KeptRow::pieces`] ([`Spill::kept_row`]). A file of [`Form::Outcomes`] is
    /// refused.
    pub fn json_read(
        &self,
        row: usize,
        servers: std::ops::Range<usize>,
        buf: &mut Vec<u8>,
    ) -> Result<JsonRead, SpillError> {
        self.expect_form(true)?;
        let end = servers.end.min(self.index.len());
        let servers = servers.start.min(end)..end;
        if let Some(whole) = self.whole_row(row)? {
            buf.clear();
            let at = servers
                .map(|n| whole.at[n].map(|(start, len)| start as usize..(start + len) as usize))
                .collect();
            return Ok(JsonRead {
                whole: Some(whole),
                at,
            });
        }
        let places: Vec<Option<Place>> = servers.map(|n| self.place(n, row)).collect();
        Ok(JsonRead {
            whole: None,
            at: self.read_places(&places, buf)?,
        })
    }

    /// Row `row` of a file of JSON results read whole ([`WHOLE_ROW`]): the one read
    /// last when it is this row, else read now (and kept in its place); `None` when the
    /// row's results are longer than that (or there is no such row).
    fn whole_row(&self, row: usize) -> Result<Option<Arc<WholeRow>>, SpillError> {
        if self
            .row_bytes
            .get(row)
            .is_none_or(|bytes| *bytes > self.whole_limit)
        {
            return Ok(None);
        }
        // Held while the row is read: a renderer on another thread wants the same row
        // (pieces are handed out in row order), and waits for it rather than read it too.
        let mut held = self
            .whole
            .lock()
            .map_err(|_| self.err(std::io::Error::other("the spill reader was poisoned")))?;
        if let Some(whole) = held.as_ref().filter(|w| w.row == row) {
            return Ok(Some(Arc::clone(whole)));
        }
        // The row held before is let go first: at most this one and one that a renderer
        // still holds are ever in memory.
        *held = None;
        let places: Vec<Option<Place>> =
            (0..self.index.len()).map(|n| self.place(n, row)).collect();
        let mut bytes = Vec::new();
        let at = self
            .read_places(&places, &mut bytes)?
            .into_iter()
            .map(|r| r.map(|r| (r.start as u32, r.len() as u32)))
            .collect();
        let whole = Arc::new(WholeRow { row, bytes, at });
        *held = Some(Arc::clone(&whole));
        Ok(Some(whole))
    }

    /// The JSON results at `places` read into `buf` (replacing what it held), in the
    /// order they are in the file, and per place, in order, where its result is in
    /// `buf`. Places that follow each other in the file are read with one `pread`,
    /// whatever their order in `places`, straight into `buf`, whose size is known: no
    /// buffer of its own to copy from, and `buf` is never grown by doubling.
    fn read_places(
        &self,
        places: &[Option<Place>],
        buf: &mut Vec<u8>,
    ) -> Result<Vec<Option<std::ops::Range<usize>>>, SpillError> {
        let mut in_file: Vec<(u64, u32, usize)> = places
            .iter()
            .enumerate()
            .filter_map(|(k, p)| p.map(|(at, len)| (at, len, k)))
            .collect();
        in_file.sort_unstable_by_key(|&(at, _, _)| at);
        buf.clear();
        buf.reserve(in_file.iter().map(|&(_, l, _)| l as usize).sum());
        let mut ranges = vec![None; places.len()];
        let mut k = 0;
        while k < in_file.len() {
            let at = in_file[k].0;
            let mut total = 0usize;
            let mut end = k;
            while end < in_file.len() && in_file[end].0 == at + total as u64 {
                total += in_file[end].1 as usize;
                end += 1;
            }
            let mut from = buf.len();
            buf.resize(from + total, 0);
            self.read_at(&mut buf[from..], at)
                .map_err(|e| self.err(e))?;
            for &(_, len, i) in &in_file[k..end] {
                ranges[i] = Some(from..from + len as usize);
                from += len as usize;
            }
            k = end;
        }
        Ok(ranges)
    }

    /// The outcomes (with their excerpts) at `places`, in order. A file of [`Form::Json`]
    /// is refused: its outcomes are JSON text, not outcomes.
    fn read(
        &self,
        places: impl Iterator<Item = Option<Place>>,
    ) -> Result<Vec<Option<(Outcome, Excerpts)>>, SpillError> {
        self.expect_form(false)?;
        let places: Vec<Option<Place>> = places.collect();
        let mut out = Vec::with_capacity(places.len());
        self.each_place(&places, |bytes| {
            out.push(
                bytes
                    .map(|b| decode(b).map_err(|e| self.err(e)))
                    .transpose()?,
            );
            Ok(())
        })?;
        Ok(out)
    }

    /// Call `f` with the bytes at each of `places`, in order (`None` for a place that is
    /// `None`). Places that follow each other in the file (each starting where the one
    /// before ends, `None`s between them aside) are read with one `pread`, up to [`RUN`]
    /// bytes at a time (a single place may be longer), into one buffer used again for
    /// each read: a server's outcomes are next to each other, so all of them are one
    /// read, and no more than a run's bytes are held.
    fn each_place(
        &self,
        places: &[Option<Place>],
        mut f: impl FnMut(Option<&[u8]>) -> Result<(), SpillError>,
    ) -> Result<(), SpillError> {
        let mut buf = Vec::new();
        let mut k = 0;
        while k < places.len() {
            let Some((at, _)) = places[k] else {
                f(None)?;
                k += 1;
                continue;
            };
            let (end, total) = run(places, k);
            buf.resize(total, 0);
            self.read_at(&mut buf, at).map_err(|e| self.err(e))?;
            let mut from = 0;
            for place in &places[k..end] {
                match *place {
                    None => f(None)?,
                    Some((_, l)) => {
                        f(Some(&buf[from..from + l as usize]))?;
                        from += l as usize;
                    }
                }
            }
            k = end;
        }
        Ok(())
    }
}

/// The reductions a spill file of JSON results keeps once for one check row
/// ([`Spill::kept_row`]); none for a report whose outcomes are not in such a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeptRow<'a> {
    /// Every kept reduction's bytes ([`Spill::kept`]).
    kept: &'a [u8],
    /// The row's: where each is in `kept`, by number.
    list: &'a [(u32, u32)],
}

impl<'a> KeptRow<'a> {
    /// The JSON result `stored` of the row, as [`Spill::json_read`] gave it, in the
    /// pieces that make the bytes its writer wrote ([`Form::Json`]): a result whose
    /// reduction is kept once for its row (`KEPT`) is what came before the reduction,
    /// the kept reduction, and what came after it; any other result is `stored` and two
    /// empty pieces. A renderer copies the three one after the other.
    #[inline]
    pub fn pieces(self, stored: &'a [u8]) -> std::io::Result<[&'a [u8]; 3]> {
        if stored.first() != Some(&KEPT) {
            return Ok([stored, &[], &[]]);
        }
        self.kept_pieces(stored)
    }

    /// [`KeptRow::pieces`] of a result that starts with the mark of a kept reduction.
    fn kept_pieces(self, stored: &'a [u8]) -> std::io::Result<[&'a [u8]; 3]> {
        let (Some(head), Some(rest)) = (stored.get(..KEPT_HEAD), stored.get(KEPT_HEAD..)) else {
            return Err(bad("kept reduction"));
        };
        let hole = u32::from_le_bytes([head[2], head[3], head[4], head[5]]) as usize;
        let kept = self
            .list
            .get(usize::from(head[1]))
            .and_then(|&(at, len)| self.kept.get(at as usize..at as usize + len as usize));
        match (kept, rest.get(..hole), rest.get(hole..)) {
            (Some(kept), Some(before), Some(after)) => Ok([before, kept, after]),
            _ => Err(bad("kept reduction")),
        }
    }
}

/// The first byte of a JSON result whose reduction is kept once for its row
/// ([`Spill::keep_reductions`]): no JSON text starts with it.
const KEPT: u8 = 0;

/// In [`Spill::ids`], a row whose reduction is left in place (no row keeps this many).
const NOT_KEPT: u8 = u8::MAX;

/// The bytes of the mark of a kept reduction: [`KEPT`], the reduction's number among its
/// row's, and where it goes (a `u32`, little endian).
const KEPT_HEAD: usize = 6;

/// The most reductions kept for one check row ([`Spill::kept_id`]): across very
/// different servers a check's reduction takes one to three values; a row with more
/// keeps the first ones and leaves the others in place.
const KEEP_PER_ROW: usize = 8;

/// The most bytes of reductions kept in all, whatever the fleet: a reduction past them
/// is left in place.
const KEEP_BYTES: usize = 1 << 20;

/// Append the bytes of `encoded` to `out` with the reductions [`Spill::keep_reductions`]
/// took out (`ids`, per row) replaced by their marks: its summary, then each outcome,
/// whole or as the mark, what came before the reduction, and what came after it.
fn put_kept(encoded: &Encoded, ids: &[u8], out: &mut Vec<u8>) {
    let bytes = &encoded.bytes;
    let mut at = encoded.summary as usize;
    out.extend_from_slice(&bytes[..at]);
    for ((len, &(start, n)), &id) in encoded.lens.iter().zip(&encoded.reductions).zip(ids) {
        let Some(len) = len else { continue };
        let len = *len as usize;
        if id == NOT_KEPT {
            out.extend_from_slice(&bytes[at..at + len]);
            at += len;
            continue;
        }
        // `len` is the outcome's without its reduction (`n` bytes), with the mark.
        let (start, n) = (start as usize, n as usize);
        let whole = len + n - KEPT_HEAD;
        let mut mark = [KEPT, id, 0, 0, 0, 0];
        mark[2..].copy_from_slice(&(start as u32).to_le_bytes());
        out.extend_from_slice(&mark);
        out.extend_from_slice(&bytes[at..at + start]);
        out.extend_from_slice(&bytes[at + start + n..at + whole]);
        at += whole;
    }
}

/// The spill file's write buffer: a server encoded in at least this many bytes is
/// written with one call of its own, without being copied into the buffer first.
const WRITE_BUFFER: usize = 1 << 14;

/// The most servers, and the most bytes, a transposed batch of a file of `form` holds
/// ([`Batch`]), or `None` when the file is laid out server by server. For [`Form::Json`]
/// and [`Form::OutcomesBatched`], read back a check row at a time for many servers,
/// batches: the servers graded one after the other have their outcomes of a row next to
/// each other, read with one `pread`. [`Form::Outcomes`] is for the renderers that read
/// a server at a time (JUnit, XCCDF), whose outcomes are then next to each other, or
/// one outcome at a time (HTML), which batches do not help.
fn batch_limits(form: Form) -> Option<(usize, usize)> {
    match form {
        Form::Json(_) | Form::OutcomesBatched => Some((BATCH_SERVERS, BATCH_BYTES)),
        Form::Outcomes => None,
    }
}

/// The most servers in a transposed batch ([`Batch`], [`batch_limits`]).
const BATCH_SERVERS: usize = 64;

/// The most bytes of a transposed batch ([`Batch`], [`batch_limits`]): the batch is
/// written when the next server would take it past them (or when it reaches them, or
/// [`BATCH_SERVERS`]), and a server of this many bytes or more is written at once, server
/// by server, never copied into a batch. The bytes of the batch pending are what the
/// spill file holds in memory while grading, besides its index.
const BATCH_BYTES: usize = 1 << 19;

/// Write all of `slices` to `w`, in order, as few calls as it takes.
fn write_all_vectored(
    w: &mut impl Write,
    mut slices: &mut [std::io::IoSlice<'_>],
) -> std::io::Result<()> {
    std::io::IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        match w.write_vectored(slices) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => std::io::IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The most bytes [`Spill::each_place`] reads with one `pread` when the places asked for
/// are next to each other (a single place may be longer).
const RUN: usize = 1 << 16;

/// The run of `places` that starts at `places[k]` (a place, not `None`): the places
/// `k..end` that follow each other in the file (`None`s between them aside), up to
/// [`RUN`] bytes (or the one place, when it is longer), and their bytes in all.
fn run(places: &[Option<Place>], k: usize) -> (usize, usize) {
    let Some((at, len)) = places[k] else {
        return (k + 1, 0);
    };
    let mut total = len as usize;
    let mut end = k + 1;
    for (j, place) in places.iter().enumerate().skip(k + 1) {
        match *place {
            None => continue,
            Some((a, l)) if a == at + total as u64 && total + l as usize <= RUN => {
                total += l as usize;
                end = j + 1;
            }
            Some(_) => break,
        }
    }
    (end, total)
}

/// One server encoded for the spill file ([`encode_server`]): the bytes to append, the
/// length of its summary at their start, and each check row's length after it (`None`:
/// no outcome).
#[derive(Debug)]
pub struct Encoded {
    bytes: Vec<u8>,
    summary: u32,
    lens: Vec<Option<u32>>,
    /// [`Form::Json`]: per check row, where its outcome's reduction is in the outcome's
    /// bytes (from their start) and its length, `(0, 0)` when the writer names none or
    /// there is no outcome; empty for the other forms.
    reductions: Vec<(u32, u32)>,
    /// What it keeps of each outcome: a spill file takes only its own form.
    form: Form,
}

/// Encode one server for a spill file of `form`: its summary (`server`, without its
/// excerpts), then its outcomes, one per check row, each with the `excerpts` of its
/// records ([`Form::Outcomes`]) or as the JSON report writes it ([`Form::Json`]): the
/// bytes [`Spill::server`] appends. Needs no spill file, so a grading worker does it and
/// the thread that writes the spill file only appends the bytes.
pub fn encode_server(
    form: Form,
    server: &Server,
    outcomes: &[Option<Outcome>],
    excerpts: &Excerpts,
) -> std::io::Result<Encoded> {
    let mut bytes = Vec::with_capacity(estimate(outcomes));
    encode_summary(server, &mut bytes)?;
    let summary = u32::try_from(bytes.len())
        .map_err(|_| std::io::Error::other("a server summary over 4 GiB"))?;
    let mut lens = Vec::with_capacity(outcomes.len());
    let mut reductions = Vec::with_capacity(if form.is_json() { outcomes.len() } else { 0 });
    for o in outcomes {
        let Some(o) = o else {
            lens.push(None);
            if form.is_json() {
                reductions.push((0, 0));
            }
            continue;
        };
        let start = bytes.len();
        match form {
            Form::Outcomes | Form::OutcomesBatched => {
                encode(o, &mut bytes);
                let mine: Vec<(&u64, &String)> = o
                    .records
                    .iter()
                    .filter_map(|seq| excerpts.get_key_value(seq))
                    .collect();
                bytes.extend_from_slice(&(mine.len() as u32).to_le_bytes());
                for (seq, text) in mine {
                    bytes.extend_from_slice(&seq.to_le_bytes());
                    put_str(&mut bytes, text);
                }
            }
            Form::Json(write) => {
                let named = write(&mut bytes, o)?;
                if bytes.get(start) == Some(&KEPT) {
                    return Err(std::io::Error::other(
                        "a JSON result that starts with a NUL byte",
                    ));
                }
                let at = match named {
                    Some(r) if start <= r.start && r.start <= r.end && r.end <= bytes.len() => {
                        u32::try_from(r.start - start)
                            .ok()
                            .zip(u32::try_from(r.len()).ok())
                            .unwrap_or((0, 0))
                    }
                    Some(_) => {
                        return Err(std::io::Error::other(
                            "a JSON result's reduction is not where it was written",
                        ))
                    }
                    None => (0, 0),
                };
                reductions.push(at);
            }
        }
        let len = u32::try_from(bytes.len() - start)
            .ok()
            .filter(|l| *l != NONE)
            .ok_or_else(|| std::io::Error::other("an outcome over 4 GiB"))?;
        lens.push(Some(len));
    }
    Ok(Encoded {
        bytes,
        summary,
        lens,
        reductions,
        form,
    })
}

/// About the bytes [`encode_server`] writes for `outcomes` and a summary, a little
/// more rather than less, so that its buffer is seldom grown (each growth copies all
/// written so far): the text of each outcome, and some bytes for its keys, legs,
/// records and details.
fn estimate(outcomes: &[Option<Outcome>]) -> usize {
    1024 + outcomes
        .iter()
        .flatten()
        .map(|o| {
            256 + o.evidence.len()
                + o.reduction.len()
                + o.subs.iter().map(|l| l.id.len() + 32).sum::<usize>()
                + 24 * o.records.len()
                + 96 * o.details.len()
        })
        .sum::<usize>()
}

impl Spill {
    /// Fill `buf` from the file at offset `at`: one `pread` on Unix (no seek, no lock: a
    /// report reads tens of thousands of outcomes, each at its own place, from several
    /// threads), a seek and a read under a lock elsewhere.
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        #[cfg(test)]
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_exact_at(&self.reader, buf, at)
        }
        #[cfg(not(unix))]
        {
            use std::io::{Read, Seek, SeekFrom};
            let _held = self
                .seek
                .lock()
                .map_err(|_| std::io::Error::other("the spill reader was poisoned"))?;
            let mut file = &self.reader;
            file.seek(SeekFrom::Start(at))?;
            file.read_exact(buf)
        }
    }
}

fn without_excerpts(v: Vec<Option<(Outcome, Excerpts)>>) -> Vec<Option<Outcome>> {
    v.into_iter().map(|o| o.map(|(o, _)| o)).collect()
}

// The encoding of one outcome: fixed-width integers (little endian), strings as a u32
// length and UTF-8 bytes, `details` as its JSON text. Written and read by this process
// only, so it has no version and no stability promise.

fn put_str(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(&(s.len() as u32).to_le_bytes());
    b.extend_from_slice(s.as_bytes());
}

const VERDICTS: [Verdict; 6] = Verdict::ORDER;
const NOT_ARISEN: [NotArisen; 3] = [
    NotArisen::Revision,
    NotArisen::Absent,
    NotArisen::NotOffered,
];

fn not_arisen_code(n: NotArisen) -> u8 {
    NOT_ARISEN.iter().position(|x| *x == n).unwrap_or(0) as u8 + 1
}

fn leg_code(o: SubOutcome) -> u8 {
    match o {
        SubOutcome::Pass => 0,
        SubOutcome::Fail => 1,
        SubOutcome::Unknown => 2,
        SubOutcome::Error => 3,
        SubOutcome::Observed => 4,
        SubOutcome::Dropped => 5,
        SubOutcome::NotArisen(n) => 10 + not_arisen_code(n),
    }
}

fn encode(o: &Outcome, b: &mut Vec<u8>) {
    b.push(VERDICTS.iter().position(|v| *v == o.verdict).unwrap_or(0) as u8);
    b.push(o.not_arisen.map_or(0, not_arisen_code));
    b.extend_from_slice(&(o.subs.len() as u32).to_le_bytes());
    for l in &o.subs {
        put_str(b, &l.id);
        b.push(leg_code(l.outcome));
        put_str(b, &l.note);
    }
    put_str(b, &o.evidence);
    put_str(b, &o.reduction);
    b.extend_from_slice(&(o.records.len() as u32).to_le_bytes());
    for r in &o.records {
        b.extend_from_slice(&r.to_le_bytes());
    }
    put_str(
        b,
        &serde_json::to_string(&o.details).unwrap_or_else(|_| "{}".into()),
    );
}

/// Reads the encoding of [`encode`].
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn bytes(&mut self, n: usize) -> std::io::Result<&[u8]> {
        if self.0.len() < n {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "a truncated outcome",
            ));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> std::io::Result<u8> {
        Ok(self.bytes(1)?[0])
    }
    fn u32(&mut self) -> std::io::Result<u32> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> std::io::Result<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.bytes(8)?);
        Ok(u64::from_le_bytes(a))
    }
    fn str(&mut self) -> std::io::Result<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.bytes(n)?.to_vec()).map_err(std::io::Error::other)
    }
}

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("a bad {what}"))
}

fn not_arisen_of(c: u8) -> std::io::Result<NotArisen> {
    NOT_ARISEN
        .get(usize::from(c).wrapping_sub(1))
        .copied()
        .ok_or_else(|| bad("not-arisen kind"))
}

/// Transcript excerpts by record seq.
pub type Excerpts = std::collections::BTreeMap<u64, String>;

fn decode(b: &[u8]) -> std::io::Result<(Outcome, Excerpts)> {
    let mut c = Cursor(b);
    let verdict = *VERDICTS
        .get(usize::from(c.u8()?))
        .ok_or_else(|| bad("verdict"))?;
    let not_arisen = match c.u8()? {
        0 => None,
        n => Some(not_arisen_of(n)?),
    };
    let n = c.u32()? as usize;
    let mut subs = Vec::with_capacity(n);
    for _ in 0..n {
        let id = c.str()?;
        let outcome = match c.u8()? {
            0 => SubOutcome::Pass,
            1 => SubOutcome::Fail,
            2 => SubOutcome::Unknown,
            3 => SubOutcome::Error,
            4 => SubOutcome::Observed,
            5 => SubOutcome::Dropped,
            k if k > 10 => SubOutcome::NotArisen(not_arisen_of(k - 10)?),
            _ => return Err(bad("leg outcome")),
        };
        let note = c.str()?;
        subs.push(SubVerdict { id, outcome, note });
    }
    let evidence = c.str()?;
    let reduction = c.str()?;
    let n = c.u32()? as usize;
    let mut records = Vec::with_capacity(n);
    for _ in 0..n {
        records.push(c.u64()?);
    }
    let details = serde_json::from_str(&c.str()?).map_err(std::io::Error::other)?;
    let mut excerpts = Excerpts::new();
    for _ in 0..c.u32()? {
        let seq = c.u64()?;
        excerpts.insert(seq, c.str()?);
    }
    let o = Outcome {
        verdict,
        subs,
        evidence,
        reduction: reduction.into(),
        records,
        details,
        not_arisen,
    };
    Ok((o, excerpts))
}

// The encoding of a server's summary ([`Server`] but its excerpts, which go with the
// outcomes they belong to), in the same terms as an outcome's.

const TRANSPORTS: [Transport; 3] = [
    Transport::StreamableHttp,
    Transport::HttpSse,
    Transport::Stdio,
];
const RUN_STATUSES: [RunStatus; 4] = [
    RunStatus::Complete,
    RunStatus::Interrupted,
    RunStatus::Failed,
    RunStatus::Recovered,
];
const BASELINE_MODES: [BaselineMode; 3] = [
    BaselineMode::File,
    BaselineMode::Stored,
    BaselineMode::Update,
];
const STEPS: [Step; 7] = [
    Step::Decode,
    Step::Imprint,
    Step::MessageDigest,
    Step::Certificate,
    Step::Signature,
    Step::Usage,
    Step::Chain,
];

/// The position of `x` in `list`, as one byte (a value outside the list is refused: the
/// summary could not be read back as it was).
fn code<T: PartialEq>(list: &[T], x: &T, what: &str) -> std::io::Result<u8> {
    list.iter()
        .position(|y| y == x)
        .map(|k| k as u8)
        .ok_or_else(|| std::io::Error::other(format!("a {what} this build cannot spill")))
}

fn put_opt_str(b: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => b.push(0),
        Some(s) => {
            b.push(1);
            put_str(b, s);
        }
    }
}

fn opt_bool_code(v: Option<bool>) -> u8 {
    match v {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    }
}

fn encode_summary(s: &Server, b: &mut Vec<u8>) -> std::io::Result<()> {
    put_str(b, &s.endpoint);
    put_str(b, &s.target);
    put_opt_str(b, s.revision.as_deref());
    b.extend_from_slice(&(s.other_eras.len() as u32).to_le_bytes());
    for e in &s.other_eras {
        put_str(b, e);
    }
    let transport = TRANSPORTS.map(Transport::label);
    b.push(code(&transport, &s.transport, "transport")?);
    match &s.timestamp {
        TimestampState::None => b.push(0),
        TimestampState::NotObtained(why) => {
            b.push(1);
            put_str(b, why);
        }
        TimestampState::Valid(t) => {
            b.push(2);
            put_str(b, &t.tsa);
            b.extend_from_slice(&t.gen_time.to_le_bytes());
            put_str(b, &t.serial);
            put_str(b, &t.policy);
        }
        TimestampState::Invalid(f) => {
            b.push(3);
            b.push(code(&STEPS, &f.step, "timestamp step")?);
            put_str(b, &f.detail);
        }
    }
    let info = s
        .server_info
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(std::io::Error::other)?;
    put_opt_str(b, info.as_deref());
    b.push(opt_bool_code(s.auth_required));
    b.push(opt_bool_code(s.authenticated));
    let statuses = RUN_STATUSES.map(RunStatus::as_str);
    b.push(code(&statuses, &s.run_status, "run status")?);
    put_opt_str(b, s.failure.as_deref());
    put_str(b, &s.run_id);
    put_str(b, &s.bundle);
    put_str(b, &s.signer);
    b.extend_from_slice(&s.collected_at.to_le_bytes());
    put_str(b, &s.collector);
    put_str(b, &s.collector_build);
    b.extend_from_slice(&s.finished_at.to_le_bytes());
    put_opt_str(b, s.sha256.as_deref());
    put_opt_str(b, s.source.as_ref().map(|(g, _)| g.as_str()));
    put_opt_str(b, s.source.as_ref().map(|(_, e)| e.as_str()));
    match &s.baseline {
        None => b.push(0),
        Some(x) => {
            b.push(1);
            b.push(code(&BASELINE_MODES, &x.mode, "baseline mode")?);
            put_str(b, &x.path);
            b.push(u8::from(x.used));
            put_opt_str(b, x.run_id.as_deref());
            match x.collected_at {
                None => b.push(0),
                Some(t) => {
                    b.push(1);
                    b.extend_from_slice(&t.to_le_bytes());
                }
            }
            put_opt_str(b, x.signer.as_deref());
            b.push(opt_bool_code(x.stored));
            put_opt_str(b, x.problem.as_deref());
        }
    }
    Ok(())
}

impl Cursor<'_> {
    fn opt_str(&mut self) -> std::io::Result<Option<String>> {
        match self.u8()? {
            0 => Ok(None),
            1 => self.str().map(Some),
            _ => Err(bad("optional string")),
        }
    }
    fn opt_bool(&mut self) -> std::io::Result<Option<bool>> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(false)),
            2 => Ok(Some(true)),
            _ => Err(bad("optional flag")),
        }
    }
    fn i64(&mut self) -> std::io::Result<i64> {
        Ok(self.u64()? as i64)
    }
    fn of<T: Copy>(&mut self, list: &[T], what: &str) -> std::io::Result<T> {
        list.get(usize::from(self.u8()?))
            .copied()
            .ok_or_else(|| bad(what))
    }
}

fn decode_summary(b: &[u8]) -> std::io::Result<Server> {
    let mut c = Cursor(b);
    let endpoint = c.str()?;
    let target = c.str()?;
    let revision = c.opt_str()?;
    let n = c.u32()? as usize;
    let mut other_eras = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        other_eras.push(c.str()?);
    }
    let transport = c.of(&TRANSPORTS, "transport")?.label();
    let timestamp = match c.u8()? {
        0 => TimestampState::None,
        1 => TimestampState::NotObtained(c.str()?),
        2 => TimestampState::Valid(Timestamp {
            tsa: c.str()?,
            gen_time: c.u64()?,
            serial: c.str()?,
            policy: c.str()?,
        }),
        3 => {
            let step = c.of(&STEPS, "timestamp step")?;
            TimestampState::Invalid(StampFailure::new(step, c.str()?))
        }
        _ => return Err(bad("timestamp state")),
    };
    let server_info = c
        .opt_str()?
        .map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(std::io::Error::other)?;
    let auth_required = c.opt_bool()?;
    let authenticated = c.opt_bool()?;
    let run_status = c.of(&RUN_STATUSES, "run status")?.as_str();
    let failure = c.opt_str()?;
    let run_id = c.str()?;
    let bundle = c.str()?;
    let signer = c.str()?;
    let collected_at = c.i64()?;
    let collector = c.str()?;
    let collector_build = c.str()?;
    let finished_at = c.i64()?;
    let sha256 = c.opt_str()?;
    let source = c.opt_str()?.zip(c.opt_str()?);
    let baseline = match c.u8()? {
        0 => None,
        1 => Some(BaselineInfo {
            mode: c.of(&BASELINE_MODES, "baseline mode")?,
            path: c.str()?,
            used: c.u8()? != 0,
            run_id: c.opt_str()?,
            collected_at: match c.u8()? {
                0 => None,
                _ => Some(c.i64()?),
            },
            signer: c.opt_str()?,
            stored: c.opt_bool()?,
            problem: c.opt_str()?,
        }),
        _ => return Err(bad("baseline")),
    };
    Ok(Server {
        endpoint,
        target,
        revision,
        other_eras,
        transport,
        timestamp,
        server_info,
        auth_required,
        authenticated,
        run_status,
        failure,
        run_id,
        bundle,
        signer,
        collected_at,
        finished_at,
        sha256,
        collector,
        collector_build,
        baseline,
        source,
        excerpts: Excerpts::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(v: Verdict) -> Outcome {
        let mut o = Outcome::from_subs(
            vec![
                SubVerdict::new("a", SubOutcome::Pass, "fine"),
                SubVerdict::new("b", SubOutcome::Fail, "not fine: \u{1b}[31m"),
                SubVerdict::new(
                    "d",
                    SubOutcome::NotArisen(NotArisen::Revision),
                    "needs 2026-07-28",
                ),
                SubVerdict::new("e", SubOutcome::Observed, ""),
            ],
            "what a probe cannot reach",
        );
        o.verdict = v;
        o.records = vec![3, 4, u64::MAX];
        o.details.insert(
            "z".into(),
            serde_json::json!({"b": 1.5, "a": [1, "x"]}).into(),
        );
        o.details.insert("a".into(), serde_json::json!(null).into());
        o
    }

    /// A server summary of each shape: `k` picks which optional parts it has and which
    /// kind of timestamp.
    fn summary(k: usize) -> Server {
        let timestamp = match k % 4 {
            0 => TimestampState::Valid(Timestamp {
                tsa: "CN=TSA, O=Lab \u{e9}".into(),
                gen_time: 1_764_480_000,
                serial: "0a1b".into(),
                policy: "2.999.1".into(), // the example arc
            }),
            1 => TimestampState::Invalid(StampFailure::new(Step::Chain, "no anchor")),
            2 => TimestampState::NotObtained("tsa unreachable".into()),
            _ => TimestampState::None,
        };
        let full = k % 2 == 0;
        Server {
            endpoint: format!("https://s{k}.test/mcp"),
            target: format!("s{k}.test"),
            revision: full.then(|| "2025-11-25".to_string()),
            other_eras: if full {
                vec!["2025-06-18".into(), "2024-11-05".into()]
            } else {
                Vec::new()
            },
            transport: TRANSPORTS[k % 3].label(),
            timestamp,
            server_info: full.then(|| serde_json::json!({"z": 1, "name": "x", "a": [1.5, null]})),
            auth_required: [None, Some(false), Some(true)][k % 3],
            authenticated: [Some(true), None, Some(false)][k % 3],
            run_status: RUN_STATUSES[k % 4].as_str(),
            failure: (!full).then(|| "connect: refused".to_string()),
            run_id: format!("run-{k}"),
            bundle: format!("b{k}.mcpev"),
            signer: "key-1".into(),
            collected_at: -5 + k as i64,
            finished_at: 7 + k as i64,
            sha256: full.then(|| "ab".repeat(32)),
            source: full.then(|| ("cursor /p/.cursor/mcp.json".into(), "files".into())),
            collector: "mcp-collect 0.2.0".into(),
            collector_build: "0123abcd".into(),
            baseline: match k % 3 {
                0 => None,
                1 => Some(BaselineInfo {
                    mode: BaselineMode::Stored,
                    path: "/state/b.mcpev".into(),
                    used: true,
                    run_id: Some("run-0".into()),
                    collected_at: Some(i64::MIN),
                    signer: Some("key-0".into()),
                    stored: None,
                    problem: None,
                }),
                _ => Some(BaselineInfo::update(
                    "/state/u.mcpev",
                    false,
                    Some("read-only".into()),
                )),
            },
            excerpts: Excerpts::new(),
        }
    }

    #[test]
    fn every_shape_of_summary_reads_back_as_written() {
        for k in 0..12 {
            let s = summary(k);
            let mut b = Vec::new();
            encode_summary(&s, &mut b).expect("encoded");
            assert_eq!(decode_summary(&b).expect("decoded"), s, "shape {k}");
            // A summary cut short is an error, never a wrong server.
            for cut in [0, 1, b.len() / 2, b.len() - 1] {
                assert!(decode_summary(&b[..cut]).is_err(), "shape {k} cut at {cut}");
            }
        }
    }

    #[test]
    fn an_index_with_room_made_is_not_grown_while_the_servers_come() {
        let mut s = Spill::create(None, Form::Outcomes).expect("a spill file");
        s.reserve(3, 2);
        let (index, lens) = (s.index.capacity(), s.lens.capacity());
        assert!(index >= 3 && lens >= 6, "{index} {lens}");
        for k in 0..3 {
            let outcomes = vec![Some(outcome(Verdict::Pass)), None];
            s.server(&summary(k), outcomes, &Excerpts::new())
                .expect("written");
        }
        assert_eq!((s.index.capacity(), s.lens.capacity()), (index, lens));
        s.seal().expect("sealed");
        assert_eq!(s.row(1).expect("read"), vec![None, None, None]);
    }

    #[test]
    fn outcomes_read_back_as_written_in_the_new_server_order() {
        let mut s = Spill::create(None, Form::Outcomes).expect("a spill file");
        let path = s.path().to_path_buf();
        let a = vec![Some(outcome(Verdict::Fail)), None];
        let b = vec![
            Some(outcome(Verdict::Pass)),
            Some(Outcome::not_arisen(NotArisen::Absent, "absent", "")),
        ];
        let ex = Excerpts::from([(4, "POST /mcp".to_string()), (9, "unused".to_string())]);
        let (sa, sb) = (summary(0), summary(1));
        assert_eq!(s.server(&sa, a.clone(), &ex).expect("written"), 0);
        assert_eq!(
            s.server(&sb, b.clone(), &Excerpts::new()).expect("written"),
            1
        );
        s.seal().expect("sealed");
        s.reorder(&[1, 0]);
        assert_eq!(
            s.summaries(0..9).expect("read"),
            vec![sb.clone(), sa.clone()]
        );
        assert_eq!(s.summaries(1..2).expect("read"), vec![sa.clone()]);
        assert_eq!(s.row(0).expect("read"), vec![b[0].clone(), a[0].clone()]);
        assert_eq!(s.row(1).expect("read"), vec![b[1].clone(), None]);
        assert_eq!(s.row(7).expect("read"), vec![None, None]);
        let with = s.row_and_excerpts(0).expect("read");
        let kept = |k: usize| with[k].as_ref().map(|(_, e)| e.clone());
        assert_eq!(kept(0), Some(Excerpts::new()));
        assert_eq!(
            kept(1),
            Some(Excerpts::from([(4, "POST /mcp".to_string())]))
        );
        assert_eq!(s.server_outcomes(1).expect("read"), a);
        assert_eq!(
            s.outcome(1, 0).expect("read"),
            a[0].clone()
                .map(|o| (o, Excerpts::from([(4, "POST /mcp".to_string())])))
        );
        assert_eq!(s.outcome(1, 1).expect("read"), None);
        drop(s);
        assert!(!path.exists(), "the spill file is removed");
    }

    /// Outcomes read back in runs of places next to each other (a server's whole row,
    /// runs cut at [`RUN`] bytes, outcomes longer than a run, rows without an outcome
    /// between them) are the outcomes written, as they are read one at a time.
    #[test]
    fn outcomes_read_in_runs_are_those_read_one_at_a_time() {
        let mut s = Spill::create(None, Form::Outcomes).expect("a spill file");
        let sizes = [0, 10, RUN / 2, RUN + 7, 5, RUN / 3 + 1, 3, RUN - 40];
        let rows = 9;
        let mut want = Vec::new();
        for n in 0..5 {
            let outcomes: Vec<Option<Outcome>> = (0..rows)
                .map(|k| {
                    ((n + k) % 4 != 3).then(|| {
                        let mut o = outcome(VERDICTS[(n + k) % 6]);
                        o.evidence = format!("{n}/{k} {}", "x".repeat(sizes[(n * 3 + k) % 8]));
                        o
                    })
                })
                .collect();
            s.server(&summary(n), outcomes.clone(), &Excerpts::new())
                .expect("written");
            want.push(outcomes);
        }
        s.seal().expect("sealed");
        for (n, w) in want.iter().enumerate() {
            assert_eq!(&s.server_outcomes(n).expect("read"), w, "server {n}");
            for (k, o) in w.iter().enumerate() {
                let one = s.outcome(n, k).expect("read").map(|(o, _)| o);
                assert_eq!(&one, o, "server {n} row {k}");
            }
        }
        for k in 0..rows {
            let column: Vec<Option<Outcome>> = want.iter().map(|w| w[k].clone()).collect();
            assert_eq!(s.row(k).expect("read"), column, "row {k}");
        }
        assert_eq!(
            s.summaries(0..9).expect("read"),
            (0..5).map(summary).collect::<Vec<_>>()
        );
    }

    /// What a file of [`Form::Json`] keeps of an outcome in these tests (the JSON
    /// report's own writer is tested with the report): its verdict and evidence.
    fn stand_in(out: &mut Vec<u8>, o: &Outcome) -> std::io::Result<Option<std::ops::Range<usize>>> {
        write!(out, "{{{}: {:?}}}", o.verdict.mark(), o.evidence)?;
        // No reduction named: none is kept.
        Ok(None)
    }

    /// A file of JSON results gives back each result's bytes as they were written, and
    /// refuses to be read as outcomes; a file of outcomes refuses to be read as
    /// JSON results.
    #[test]
    fn a_file_of_json_results_gives_them_back_and_no_outcomes() {
        let mut s = Spill::create(None, Form::Json(stand_in)).expect("a spill file");
        let a = vec![
            Some(outcome(Verdict::Fail)),
            None,
            Some(outcome(Verdict::Pass)),
        ];
        let b = vec![
            Some(Outcome::not_arisen(NotArisen::Absent, "absent", "")),
            Some(outcome(Verdict::Error)),
            None,
        ];
        s.server(&summary(0), a.clone(), &Excerpts::new())
            .expect("written");
        s.server(&summary(1), b.clone(), &Excerpts::new())
            .expect("written");
        s.seal().expect("sealed");
        s.reorder(&[1, 0]);
        let json = |o: &Option<Outcome>| {
            o.as_ref().map(|o| {
                let mut v = Vec::new();
                stand_in(&mut v, o).expect("rendered");
                v
            })
        };
        let mut buf = Vec::new();
        for k in 0..3 {
            let got = s.json_range(k, 0..9, &mut buf).expect("read");
            let got: Vec<Option<Vec<u8>>> = got
                .into_iter()
                .map(|r| r.map(|r| buf[r].to_vec()))
                .collect();
            assert_eq!(got, vec![json(&b[k]), json(&a[k])], "row {k}");
        }
        assert_eq!(
            s.summaries(0..2).expect("read"),
            vec![summary(1), summary(0)]
        );
        let e = s.row(0).expect_err("not outcomes");
        assert!(
            e.to_string()
                .ends_with("it holds JSON results, not outcomes"),
            "{e}"
        );
        assert!(s.server_outcomes(0).is_err() && s.outcome(0, 0).is_err());
        let mut o = Spill::create(None, Form::Outcomes).expect("a spill file");
        o.server(&summary(0), a, &Excerpts::new()).expect("written");
        o.seal().expect("sealed");
        let e = o.json_range(0, 0..1, &mut buf).expect_err("not JSON");
        assert!(
            e.to_string()
                .ends_with("it holds outcomes, not JSON results"),
            "{e}"
        );
    }

    /// Server `n` of a test fleet with `rows` check rows: outcomes of many sizes (some
    /// longer than [`RUN`]), and rows without one.
    fn fleet_server(n: usize, rows: usize) -> (Server, Vec<Option<Outcome>>) {
        let sizes = [0, 10, 700, RUN + 7, 5, 3000, 3, 90];
        let outcomes = (0..rows)
            .map(|k| {
                ((n + 2 * k) % 5 != 3).then(|| {
                    let mut o = outcome(VERDICTS[(n + k) % 6]);
                    o.evidence = format!("{n}/{k} {}", "x".repeat(sizes[(n * 3 + k) % 8]));
                    o
                })
            })
            .collect();
        (summary(n), outcomes)
    }

    /// More bytes than a test fleet's: a batch cut only by its servers.
    const ALL: usize = 1 << 22;

    /// A spill file of `form` with `servers` written to it, in transposed batches of
    /// `batch` (`None`: server by server, the layout every server had before batches),
    /// sealed and put in `order`.
    fn spill_of(
        form: Form,
        batch: Option<(usize, usize)>,
        servers: &[(Server, Vec<Option<Outcome>>)],
        order: &[usize],
    ) -> Spill {
        let mut s = Spill::create(None, form).expect("a spill file");
        s.batch = batch;
        for (n, (summary, outcomes)) in servers.iter().enumerate() {
            let got = s
                .server(summary, outcomes.clone(), &Excerpts::new())
                .expect("written");
            assert_eq!(got, n);
        }
        s.seal().expect("sealed");
        s.reorder(order);
        s
    }

    /// The bytes of encoded server `n` of `servers`.
    fn encoded_len(form: Form, servers: &[(Server, Vec<Option<Outcome>>)], n: usize) -> usize {
        let (summary, outcomes) = &servers[n];
        encode_server(form, summary, outcomes, &Excerpts::new())
            .expect("encoded")
            .bytes
            .len()
    }

    /// Everything `got` gives back is what `want` (server by server) gives: summaries,
    /// and the JSON results or the outcomes of every row on every range of servers and in
    /// an order of servers of its own.
    fn reads_the_same(got: &Spill, want: &Spill, rows: usize, what: &str) {
        let n = want.index.len();
        assert_eq!(got.index.len(), n, "{what}");
        let ranges = [0..n + 3, 0..1, 1..n, n / 3..n / 2 + 2, n - 1..n, n..n + 1];
        for r in &ranges {
            assert_eq!(
                got.summaries(r.clone()).expect("read"),
                want.summaries(r.clone()).expect("read"),
                "{what}: summaries {r:?}"
            );
        }
        // Every order: backwards, every other, one server twice.
        let mut shuffled: Vec<usize> = (0..n).rev().collect();
        shuffled.extend((0..n).step_by(2));
        shuffled.push(n / 2);
        shuffled.push(n + 4);
        for row in 0..rows + 2 {
            if got.form.is_json() {
                let (mut gb, mut wb) = (Vec::new(), Vec::new());
                for r in &ranges {
                    let g = got.json_range(row, r.clone(), &mut gb).expect("read");
                    let w = want.json_range(row, r.clone(), &mut wb).expect("read");
                    let bytes = |v: Vec<Option<std::ops::Range<usize>>>, b: &[u8]| {
                        v.into_iter()
                            .map(|p| p.map(|p| b[p].to_vec()))
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(bytes(g, &gb), bytes(w, &wb), "{what}: row {row} {r:?}");
                }
                continue;
            }
            assert_eq!(
                got.row_and_excerpts(row).expect("read"),
                want.row_and_excerpts(row).expect("read"),
                "{what}: row {row}"
            );
            for r in &ranges {
                assert_eq!(
                    got.row_range(row, r.clone()).expect("read"),
                    want.row_range(row, r.clone()).expect("read"),
                    "{what}: row {row} {r:?}"
                );
            }
            assert_eq!(
                got.outcomes_at(row, &shuffled).expect("read"),
                want.outcomes_at(row, &shuffled).expect("read"),
                "{what}: row {row} in an order of its own"
            );
            for i in 0..n + 1 {
                assert_eq!(
                    got.outcome(i, row).expect("read"),
                    want.outcome(i, row).expect("read"),
                    "{what}: server {i} row {row}"
                );
            }
        }
        if !got.form.is_json() {
            for i in 0..n + 1 {
                assert_eq!(
                    got.server_outcomes(i).expect("read"),
                    want.server_outcomes(i).expect("read"),
                    "{what}: server {i}"
                );
            }
        }
    }

    /// The whole file.
    fn file_bytes(s: &Spill) -> Vec<u8> {
        let mut b = vec![0; s.end as usize];
        s.read_at(&mut b, 0).expect("read");
        b
    }

    /// A transposed batch of one server is laid out as the server by server layout: the
    /// file is the same bytes.
    #[test]
    fn a_batch_of_one_server_is_the_server_by_server_layout() {
        let fleet: Vec<_> = (0..4).map(|n| fleet_server(n, 7)).collect();
        for form in [Form::Json(stand_in), Form::Outcomes, Form::OutcomesBatched] {
            let order = [2, 0, 3, 1];
            let one = spill_of(form, Some((1, ALL)), &fleet, &order);
            let old = spill_of(form, None, &fleet, &order);
            assert_eq!(one.batches.len(), 4);
            assert_eq!(file_bytes(&one), file_bytes(&old), "{}", form.name());
            reads_the_same(&one, &old, 7, form.name());
        }
    }

    /// Batches of every shape read back what the server by server layout gives: batches
    /// cut by their servers, a batch that ends exactly at its bytes, a server whose bytes
    /// alone are past a batch's, servers with rows without an outcome, servers of other
    /// rows in between, and every server order across batches.
    #[test]
    fn batches_read_back_what_the_server_by_server_layout_gives() {
        let rows = 9;
        let mut fleet: Vec<_> = (0..23).map(|n| fleet_server(n, rows)).collect();
        // Servers with fewer and more rows, and one with no outcome at all.
        fleet[11] = fleet_server(11, 4);
        fleet[12] = fleet_server(12, rows + 3);
        fleet[17].1 = vec![None; rows];
        let n = fleet.len();
        let orders: [Vec<usize>; 3] = [
            (0..n).collect(),
            (0..n).rev().collect(),
            (0..n).map(|k| (k * 7) % n).collect(),
        ];
        for form in [Form::Json(stand_in), Form::Outcomes, Form::OutcomesBatched] {
            let len = |k| encoded_len(form, &fleet, k);
            // Servers 0 and 1 end a batch exactly at its bytes; at `len(5)` server 5
            // (and each as large) is written alone.
            let exact = len(0) + len(1);
            for batch in [
                (2, ALL),
                (3, ALL),
                (usize::MAX, exact),
                (4, exact),
                (usize::MAX, RUN),
                (usize::MAX, 3 * RUN),
                (usize::MAX, len(5)),
            ] {
                for order in &orders {
                    let got = spill_of(form, Some(batch), &fleet, order);
                    let want = spill_of(form, None, &fleet, order);
                    let what = format!("{} {batch:?} {:?}", form.name(), &order[..3]);
                    assert!(got.batches.len() > 1, "{what}");
                    assert_eq!(got.end, want.end, "{what}: the same bytes in all");
                    reads_the_same(&got, &want, rows + 3, &what);
                }
            }
        }
    }

    /// Where batches are cut: at their servers, exactly at their bytes, before the
    /// server that would take them past their bytes, at a server of other rows; a server
    /// whose bytes alone reach them is written at once, server by server; [`Spill::seal`]
    /// writes the batch pending.
    #[test]
    fn batches_are_cut_where_their_limits_say() {
        let form = Form::Json(stand_in);
        let mut fleet: Vec<_> = (0..6).map(|n| fleet_server(n, 5)).collect();
        fleet[4] = fleet_server(4, 6);
        let exact = encoded_len(form, &fleet, 0) + encoded_len(form, &fleet, 1);
        // Server 3 takes a batch of server 2 past its bytes, and is not past them alone.
        let pad =
            (exact + 1).saturating_sub(encoded_len(form, &fleet, 2) + encoded_len(form, &fleet, 3));
        if let Some(o) = fleet[3].1.iter_mut().flatten().next() {
            o.evidence.push_str(&"y".repeat(pad));
        }
        let len = |k| encoded_len(form, &fleet, k);
        let mut s = Spill::create(None, form).expect("a spill file");
        s.batch = Some((usize::MAX, exact));
        let add = |s: &mut Spill, k: usize| {
            let (summary, outcomes) = &fleet[k];
            s.server(summary, outcomes.clone(), &Excerpts::new())
                .expect("written")
        };
        add(&mut s, 0);
        assert_eq!((s.pending_servers, s.end), (1, 0), "pending");
        add(&mut s, 1);
        assert_eq!(s.pending_servers, 0, "written at exactly its bytes");
        assert_eq!(s.end as usize, exact);
        add(&mut s, 2);
        add(&mut s, 3);
        assert!(len(2) + len(3) > exact && len(3) < exact);
        assert_eq!(s.pending_servers, 1, "server 2 written before 3 went past");
        assert_eq!(s.end as usize, exact + len(2));
        // Other rows: a batch of their own.
        add(&mut s, 4);
        assert_eq!(s.batches.last().map(|b| b.rows), Some(6));
        assert_eq!(s.pending_servers, 1);
        // A server alone past the bytes: the pending batch, then it, written at once.
        s.batch = Some((usize::MAX, len(5)));
        add(&mut s, 5);
        assert_eq!(s.pending_servers, 0);
        assert_eq!(s.batches.last().map(|b| b.starts_at), Some(SERVER_MAJOR));
        let total: usize = (0..6).map(len).sum();
        assert_eq!(s.end as usize, total, "all written");
        // A batch of servers pending at the seal is written by it.
        let mut t = Spill::create(None, form).expect("a spill file");
        t.batch = Some((usize::MAX, ALL));
        for k in 0..3 {
            add(&mut t, k);
        }
        assert_eq!((t.pending_servers, t.end), (3, 0));
        t.seal().expect("sealed");
        assert_eq!(t.end as usize, len(0) + len(1) + len(2));
        let e = t
            .server_encoded(encode_server(
                form,
                &fleet[0].0,
                &fleet[0].1,
                &Excerpts::new(),
            ))
            .expect_err("sealed");
        assert!(e.to_string().starts_with("spill file "), "{e}");
        let old = spill_of(form, None, &fleet[..3], &[0, 1, 2]);
        reads_the_same(&t, &old, 5, "sealed with a batch pending");
        // A server number not in the file has no outcome, never another server's.
        t.reorder(&[0, 9]);
        let mut buf = Vec::new();
        for row in 0..5 {
            let got = t.json_range(row, 0..2, &mut buf).expect("read");
            assert_eq!(got.len(), 2);
            assert_eq!(got[1], None, "row {row}");
        }
    }

    /// A file of [`Form::OutcomesBatched`], with the limits it is created with, is laid
    /// out in transposed batches and reads back, excerpts and all, what a file of
    /// [`Form::Outcomes`] (server by server) gives, in every server order; the two keep
    /// the same bytes in all, and take each other's encoded servers.
    #[test]
    fn a_batched_file_of_outcomes_reads_back_as_the_server_by_server_one() {
        let rows = 6;
        // More servers than a batch holds, so batches are cut by their servers too.
        let n = BATCH_SERVERS * 2 + 9;
        let fleet: Vec<_> = (0..n).map(|k| fleet_server(k, rows)).collect();
        let ex = |k: usize| {
            Excerpts::from([
                (3, format!("POST /mcp {k}")),
                (u64::MAX, "x".repeat(k % 5)),
                (8, "not a record of these outcomes".to_string()),
            ])
        };
        let orders: [Vec<usize>; 3] = [
            (0..n).collect(),
            (0..n).rev().collect(),
            (0..n).map(|k| (k * 7) % n).collect(),
        ];
        for order in &orders {
            let make = |form: Form| {
                let mut s = Spill::create(None, form).expect("a spill file");
                for (k, (summary, outcomes)) in fleet.iter().enumerate() {
                    let encoded = encode_server(
                        // Encoded in the other form of outcomes: the same bytes.
                        match form {
                            Form::Outcomes => Form::OutcomesBatched,
                            _ => Form::Outcomes,
                        },
                        summary,
                        outcomes,
                        &ex(k),
                    );
                    assert_eq!(s.server_encoded(encoded).expect("written"), k);
                }
                s.seal().expect("sealed");
                s.reorder(order);
                s
            };
            let got = make(Form::OutcomesBatched);
            let want = make(Form::Outcomes);
            assert!(
                got.batches.len() > 2 && got.batches.iter().all(|b| b.starts_at != SERVER_MAJOR),
                "transposed batches"
            );
            assert!(
                want.batches.len() == 1 && want.batches[0].starts_at == SERVER_MAJOR,
                "server by server"
            );
            assert_eq!(got.end, want.end, "the same bytes in all");
            let what = format!("batched outcomes {:?}", &order[..3]);
            reads_the_same(&got, &want, rows, &what);
            let kept = got.row_and_excerpts(0).expect("read");
            assert!(
                kept.iter().flatten().any(|(_, e)| e.len() == 2),
                "{what}: excerpts kept"
            );
        }
    }

    /// A row of JSON results no longer than [`Spill::whole_limit`] is read whole at its
    /// first read, one read per batch whatever the order the servers were given in, and
    /// gives back what reading it a piece at a time gives; a longer row is read a piece
    /// at a time, and a row read whole is let go when another is read.
    #[test]
    fn a_short_row_of_json_results_is_read_whole_once() {
        let rows = 5;
        let n = 40;
        let fleet: Vec<_> = (0..n).map(|k| fleet_server(k, rows)).collect();
        // Given in one order, read in another: every fourth server, as a report by
        // endpoint reads bundles named in an order of their own.
        let order: Vec<usize> = (0..n).map(|k| (k % 10) * 4 + k / 10).collect();
        let batch = Some((8, ALL));
        let form = Form::Json(stand_in);
        let whole = spill_of(form, batch, &fleet, &order);
        let mut pieces = spill_of(form, batch, &fleet, &order);
        pieces.whole_limit = 0;
        reads_the_same(&whole, &pieces, rows, "whole rows against pieces");
        let reads = |s: &Spill| s.reads.load(std::sync::atomic::Ordering::Relaxed);
        let mut buf = Vec::new();
        for row in 0..rows {
            let batches = n.div_ceil(8);
            let (w0, p0) = (reads(&whole), reads(&pieces));
            for start in (0..n).step_by(4) {
                let a = whole
                    .json_range(row, start..start + 4, &mut buf)
                    .expect("read");
                assert_eq!(a.len(), 4);
                pieces
                    .json_range(row, start..start + 4, &mut buf)
                    .expect("read");
            }
            assert!(
                reads(&whole) - w0 <= batches,
                "row {row}: one read per batch at most, not {}",
                reads(&whole) - w0
            );
            assert!(
                reads(&pieces) - p0 > batches,
                "row {row}: a piece at a time reads each result on its own"
            );
            let held = whole.whole.lock().expect("held");
            assert_eq!(held.as_ref().map(|w| w.row), Some(row), "row {row} held");
        }
        // Over the limit: read a piece at a time, the row held before kept.
        let mut short = spill_of(form, batch, &fleet, &order);
        short.whole_limit = short.row_bytes[1];
        short.json_range(1, 0..4, &mut buf).expect("read");
        let longer = (0..rows)
            .find(|&r| short.row_bytes[r] > short.whole_limit)
            .expect("a longer row");
        let r0 = reads(&short);
        short.json_range(longer, 0..4, &mut buf).expect("read");
        assert!(reads(&short) - r0 <= 4, "a piece of four results");
        let held = short.whole.lock().expect("held");
        assert_eq!(held.as_ref().map(|w| w.row), Some(1));
    }

    /// A stand-in writer of JSON results that names where it wrote the reduction.
    fn naming_reduction(
        out: &mut Vec<u8>,
        o: &Outcome,
    ) -> std::io::Result<Option<std::ops::Range<usize>>> {
        write!(out, "{{{}: {:?}, ", o.verdict.mark(), o.evidence)?;
        let start = out.len();
        write!(out, "{:?}", o.reduction)?;
        let end = out.len();
        out.extend_from_slice(b", \"after\"}");
        Ok(Some(start..end))
    }

    /// [`naming_reduction`]'s bytes, naming no reduction: none is kept.
    fn naming_none(
        out: &mut Vec<u8>,
        o: &Outcome,
    ) -> std::io::Result<Option<std::ops::Range<usize>>> {
        naming_reduction(out, o).map(|_| None)
    }

    /// Server `n` of a fleet whose rows' reductions are: 0 the same on every server,
    /// 1 the same but on every fifth server, 2 another on each server (more than a row
    /// keeps), 3 empty (shorter than the mark of a kept one), 4 one with text to escape,
    /// and on some servers no outcome.
    fn reduction_server(n: usize) -> (Server, Vec<Option<Outcome>>) {
        let reductions = [
            "what a black-box probe cannot reach: the operator's side".to_string(),
            if n % 5 == 0 {
                "only the operator can tell".to_string()
            } else {
                "the server's configuration is not observable".to_string()
            },
            format!("server {n} alone"),
            String::new(),
            "a \"quoted\"\nline and a tab\t".to_string(),
        ];
        let outcomes = reductions
            .into_iter()
            .enumerate()
            .map(|(k, r)| {
                (n % 7 != 3 || k % 2 == 0).then(|| {
                    let mut o = outcome(VERDICTS[(n + k) % 6]);
                    o.evidence = format!("{n}/{k} {}", "x".repeat(n % 9));
                    o.reduction = r.into();
                    o
                })
            })
            .collect();
        (summary(n), outcomes)
    }

    /// In a file of JSON results, each distinct reduction of a row is kept once (up to
    /// a row's and a file's limits, past which it stays in place): the file is smaller,
    /// and every result, put back together, is the bytes its writer wrote, in every
    /// layout and server order.
    #[test]
    fn a_reduction_shared_by_a_rows_results_is_kept_once() {
        let n = BATCH_SERVERS + 23;
        let rows = 5;
        let fleet: Vec<_> = (0..n).map(reduction_server).collect();
        let order: Vec<usize> = (0..n).map(|k| (k * 7) % n).collect();
        let shared = format!(
            "{:?}",
            fleet[0].1[0].as_ref().map(|o| &o.reduction).unwrap()
        );
        for batch in [Some((BATCH_SERVERS, BATCH_BYTES)), Some((3, ALL)), None] {
            for keep in [(KEEP_PER_ROW, KEEP_BYTES), (KEEP_PER_ROW, shared.len())] {
                let what = format!("{batch:?}, keep {keep:?}");
                let make = |write: WriteResult| {
                    let mut s = Spill::create(None, Form::Json(write)).expect("a spill file");
                    s.batch = batch;
                    s.keep = keep;
                    for (summary, outcomes) in &fleet {
                        s.server(summary, outcomes.clone(), &Excerpts::new())
                            .expect("written");
                    }
                    s.seal().expect("sealed");
                    s.reorder(&order);
                    s
                };
                let got = make(naming_reduction);
                let plain = make(naming_none);
                // Every result whole again, as the writer wrote it.
                let mut buf = Vec::new();
                let mut marked = 0;
                for row in 0..rows + 1 {
                    let parts = got.json_range(row, 0..n, &mut buf).expect("read");
                    assert_eq!(parts.len(), n);
                    for (k, part) in parts.into_iter().enumerate() {
                        let want = fleet[order[k]].1.get(row).cloned().flatten().map(|o| {
                            let mut v = Vec::new();
                            naming_reduction(&mut v, &o).expect("written");
                            v
                        });
                        let whole = part.map(|p| {
                            marked += usize::from(buf[p.start] == KEPT);
                            got.json_pieces(row, &buf[p]).expect("pieces").concat()
                        });
                        assert_eq!(whole, want, "{what}: row {row} server {k}");
                    }
                }
                let saved = plain.end - got.end;
                let per = (shared.len() - KEPT_HEAD) as u64;
                if keep.1 == KEEP_BYTES {
                    // Rows 0, 1 and 4 on (nearly) every server, and the first servers of
                    // row 2; never row 3, whose reduction is not longer than the mark.
                    assert_eq!(got.kept_rows[2].len(), KEEP_PER_ROW, "{what}");
                    assert!(got.kept_rows[3].is_empty(), "{what}");
                    assert_eq!(got.kept_rows[1].len(), 2, "{what}");
                    assert!(saved > n as u64 * per, "{what}: {saved} saved");
                    assert!(marked > 2 * n + n / 2, "{what}: {marked}");
                } else {
                    // Only row 0's reduction fits the bytes: the others stay in place.
                    assert_eq!(got.kept, shared.as_bytes(), "{what}");
                    assert_eq!(saved, n as u64 * per, "{what}");
                    assert_eq!(marked, n, "{what}");
                }
                // Nothing kept when the writer names no reduction: the file as before.
                assert!(
                    plain.kept.is_empty() && plain.kept_rows.is_empty(),
                    "{what}"
                );
            }
        }
    }

    /// A mark of a kept reduction that names none kept, or a place past the result, is
    /// an error, never other bytes; a JSON result that starts with the mark's byte is
    /// refused when it is encoded.
    #[test]
    fn a_bad_mark_of_a_kept_reduction_is_an_error() {
        let mut s = Spill::create(None, Form::Json(naming_reduction)).expect("a spill file");
        s.server(
            &reduction_server(0).0,
            reduction_server(0).1,
            &Excerpts::new(),
        )
        .expect("written");
        s.seal().expect("sealed");
        let mut buf = Vec::new();
        let part = s.json_range(0, 0..1, &mut buf).expect("read")[0]
            .clone()
            .expect("a result");
        let stored = buf[part].to_vec();
        assert_eq!(stored[..2], [KEPT, 0]);
        assert!(s.json_pieces(0, &stored).is_ok());
        let mut other = stored.clone();
        other[1] = 1;
        assert!(s.json_pieces(0, &other).is_err(), "no such kept reduction");
        assert!(s.json_pieces(7, &stored).is_err(), "no such row");
        let mut past = stored.clone();
        past[2..6].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(s.json_pieces(0, &past).is_err(), "past the result");
        fn nul(out: &mut Vec<u8>, _: &Outcome) -> std::io::Result<Option<std::ops::Range<usize>>> {
            out.extend_from_slice(b"\0{}");
            Ok(None)
        }
        let e = encode_server(
            Form::Json(nul),
            &summary(0),
            &[Some(outcome(Verdict::Pass))],
            &Excerpts::new(),
        )
        .expect_err("refused");
        assert!(e.to_string().contains("NUL"), "{e}");
    }

    #[test]
    fn an_unwritable_directory_is_named() {
        let dir = std::env::temp_dir().join("mcp-grade-no-such-dir/below");
        let e = Spill::create(Some(&dir), Form::Outcomes).expect_err("no such directory");
        assert!(e.path.starts_with(&dir), "{e}");
        assert!(e.to_string().starts_with("spill file "), "{e}");
    }
}
