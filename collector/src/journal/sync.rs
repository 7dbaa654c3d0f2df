//! Syncing journals to disk at bounded intervals, so that a power loss costs at most
//! the last few records (docs/collector.md, "The journal": the sync policy).
//!
//! A journal asks for a sync ([`SyncState::now`]) every [`SYNC_EVERY_RECORDS`] records
//! or [`SYNC_EVERY_BYTES`] bytes, whichever comes first, and writes a sync mark into
//! the journal just before (so `--recover` can say how far the last sync reached). Any
//! write not covered that way is synced at most [`SYNC_INTERVAL`] later
//! ([`SyncState::within`]), also when the run then waits on a silent server. Sealing
//! syncs the journal itself, in line, before it signs.
//!
//! The `fdatasync` calls run on one thread per process, not on the task that records:
//! a sync waits on the disk (about 2 ms on the machine of docs/performance.md), and a
//! run's tasks must not. When that thread cannot be started, the journal syncs in line.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// A sync is asked after this many records since the last one.
pub const SYNC_EVERY_RECORDS: u64 = 64;
/// A sync is asked after this many bytes since the last one (256 KiB).
pub const SYNC_EVERY_BYTES: u64 = 256 << 10;
/// No write stays unsynced longer than this (plus the sync's own time).
pub const SYNC_INTERVAL: Duration = Duration::from_secs(1);

/// A journal's open file, shared with the sync thread.
#[derive(Debug)]
pub(super) struct SyncState {
    file: File,
    /// Bytes appended so far.
    written: AtomicU64,
    /// Bytes known to be on disk.
    synced: AtomicU64,
    /// A timed sync is queued.
    deferred: AtomicBool,
}

enum Job {
    Now(Arc<SyncState>),
    At(Instant, Weak<SyncState>),
}

impl SyncState {
    pub(super) fn new(file: File, written: u64) -> Arc<SyncState> {
        Arc::new(SyncState {
            file,
            written: AtomicU64::new(written),
            synced: AtomicU64::new(0),
            deferred: AtomicBool::new(false),
        })
    }

    /// The file, to append to.
    pub(super) fn file(&self) -> &File {
        &self.file
    }

    /// The journal now holds `total` bytes.
    pub(super) fn wrote(&self, total: u64) {
        self.written.store(total, Ordering::Release);
    }

    /// Sync what was written so far, on the sync thread.
    pub(super) fn now(self: &Arc<SyncState>) {
        if !send(Job::Now(self.clone())) {
            self.sync();
        }
    }

    /// Make sure what was written so far is synced within [`SYNC_INTERVAL`].
    pub(super) fn within(self: &Arc<SyncState>) {
        if self.deferred.swap(true, Ordering::AcqRel) {
            return;
        }
        if !send(Job::At(
            Instant::now() + SYNC_INTERVAL,
            Arc::downgrade(self),
        )) {
            self.deferred.store(false, Ordering::Release);
            self.sync();
        }
    }

    /// True when every byte written so far is known to be on disk.
    #[cfg(test)]
    pub(super) fn is_synced(&self) -> bool {
        self.synced.load(Ordering::Acquire) >= self.written.load(Ordering::Acquire)
    }

    /// Sync in line (sealing); an error is the caller's to report.
    pub(super) fn sync_here(&self) -> std::io::Result<()> {
        let w = self.written.load(Ordering::Acquire);
        self.file.sync_data()?;
        self.synced.fetch_max(w, Ordering::AcqRel);
        Ok(())
    }

    /// Sync when something was written since the last sync. A failure here is not
    /// reported: sealing syncs again in line and reports it.
    fn sync(&self) {
        if self.synced.load(Ordering::Acquire) < self.written.load(Ordering::Acquire) {
            let _ = self.sync_here();
        }
    }
}

/// Hand `job` to the sync thread (started on first use); false when there is none.
fn send(job: Job) -> bool {
    static SYNCER: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();
    let tx = SYNCER.get_or_init(|| {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("journal-sync".into())
            .spawn(move || run(rx))
            .ok()
            .map(|_| Mutex::new(tx))
    });
    match tx {
        Some(tx) => tx
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(job)
            .is_ok(),
        None => false,
    }
}

/// The sync thread: syncs asked now at once, timed ones when due (a journal already
/// dropped, or synced since, costs nothing).
fn run(rx: mpsc::Receiver<Job>) {
    let mut timed: Vec<(Instant, Weak<SyncState>)> = Vec::new();
    loop {
        let next = timed.iter().map(|(t, _)| *t).min();
        let job = match next {
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(t) => rx.recv_timeout(t.saturating_duration_since(Instant::now())),
        };
        match job {
            Ok(Job::Now(s)) => s.sync(),
            Ok(Job::At(t, s)) => timed.push((t, s)),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        let now = Instant::now();
        timed.retain(|(t, s)| {
            if *t > now {
                return true;
            }
            if let Some(s) = s.upgrade() {
                s.deferred.store(false, Ordering::Release);
                s.sync();
            }
            false
        });
    }
}
