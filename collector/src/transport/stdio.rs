//! The stdio transport: a local MCP server launched as a child process, one JSON-RPC
//! message per line on its stdin and stdout (docs/collector.md, "stdio targets").
//!
//! * The child gets a clean environment: only the `--env` variables and the minimal
//!   policy of [`INHERITED`] (copied from the collector's own environment when set), so
//!   a credential in the operator's shell never reaches a server that did not ask for it.
//! * It runs in its own process group, so the end of the run stops the server and
//!   whatever it spawned (a launcher such as `npx` or `uv run` forks the real server).
//! * Three threads own the pipes (stdin writer, stdout and stderr readers); the async
//!   side never blocks on a pipe, and a server that stops reading its stdin cannot stall
//!   the run past the per-request timeout.
//! * Every stdout line is kept, whatever it holds: a line that is not a JSON-RPC message
//!   is evidence (5.3.1). Lines and stderr are capped at the run's body cap; the length
//!   that crossed the pipe is kept beside them.
//! * Bounded whatever the server writes. The stdout reader hands lines over through a
//!   queue of at most [`QUEUE_BYTES`]: when it is full the reader stops reading, so a
//!   server that writes without end blocks on its own stdout. Over a whole run, lines are
//!   stored only until they cost the share of `--bundle-cap` given at spawn (each line
//!   its stored bytes plus [`LINE_OVERHEAD`]); later lines are counted, measured and
//!   hashed in the record's `unkept` instead, except an awaited answer, which is always
//!   stored. The wait for an answer checks its deadline on every line and yields every
//!   [`YIELD_EVERY`] lines, so a flood cannot hold off the per-target deadline.
//! * [`StdioChild::stop`] ends the process: stdin closed, a short grace to exit, then
//!   SIGTERM to the group, then SIGKILL; it reaps the child (no zombie). Dropping the
//!   handle does the same, as a backstop.
//!
//! Nothing here knows about the journal or MCP revisions.

use std::io::{BufRead, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_probe_schema::model::{
    CredentialArg, ErrorKind, ProcessExit, StdioExchange, StdioLine, StdioProcess, StdioUnkept,
    TransportError,
};
use mcp_probe_schema::vocab::LegId;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

/// Stdout bytes in flight between the reader thread and the run at most (each line
/// counted as its stored bytes plus [`LINE_OVERHEAD`]).
pub const QUEUE_BYTES: u64 = 4 << 20;

/// What one stored line costs beyond its bytes (the record's per-line fields and
/// allocations), for the queue and the storage budget.
pub const LINE_OVERHEAD: u64 = 96;

/// The wait for an answer yields to the runtime after this many lines.
pub const YIELD_EVERY: u64 = 256;

/// The variables passed on from the collector's environment when set: what a program
/// needs to be found and to find its own files, nothing that carries a credential.
pub const INHERITED: &[&str] = &["PATH", "HOME", "LANG", "TMPDIR"];

/// Flag names that announce a credential as their value (case-insensitive substrings of
/// the flag name without its dashes).
const CREDENTIAL_WORDS: &[&str] = &[
    "token",
    "key",
    "secret",
    "password",
    "passwd",
    "auth",
    "credential",
    "cookie",
    "bearer",
];

/// A value of at least this many characters with [`HIGH_ENTROPY_BITS`] per character is
/// taken for a credential wherever it stands.
const HIGH_ENTROPY_MIN_LEN: usize = 20;
const HIGH_ENTROPY_BITS: f64 = 3.5;

/// What the operator asked to launch.
#[derive(Clone)]
pub struct Launch {
    /// Program and arguments as typed.
    pub argv: Vec<String>,
    /// `--env NAME=VALUE`, in order.
    pub env: Vec<(String, String)>,
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the values: an argument or a variable may be a credential.
        write!(
            f,
            "Launch({} argument(s), env {:?})",
            self.argv.len(),
            self.env.iter().map(|(n, _)| n).collect::<Vec<_>>()
        )
    }
}

/// The command line as it may be recorded, and the values that must not be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownArgv {
    /// `argv` with each credential-looking value replaced by its fingerprint.
    pub argv: Vec<String>,
    /// What was replaced, and why.
    pub credential_args: Vec<CredentialArg>,
    /// The replaced values (to register with the run's redactor).
    pub secrets: Vec<String>,
}

fn credential_flag(flag: &str) -> bool {
    let name = flag.trim_start_matches('-').to_ascii_lowercase();
    !name.is_empty() && CREDENTIAL_WORDS.iter().any(|w| name.contains(w))
}

/// Shannon entropy of `s` in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in s.chars() {
        *counts.entry(c).or_insert(0u32) += 1;
    }
    let n = s.chars().count() as f64;
    counts
        .values()
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// A long value that looks random (a key, a token), and is not a path or a URL.
pub fn high_entropy(v: &str) -> bool {
    v.len() >= HIGH_ENTROPY_MIN_LEN
        && !v.contains('/')
        && !v.contains('\\')
        && !v.contains(' ')
        && entropy(v) >= HIGH_ENTROPY_BITS
}

/// Classify a command line: the value after a flag named like a credential
/// (`--api-key VALUE`), the value of `--flag=VALUE` when the flag is so named, and any
/// high-entropy argument are replaced by their fingerprint. The program (argv\[0\]) is
/// kept as typed.
pub fn shown_argv(argv: &[String]) -> ShownArgv {
    let mut out = ShownArgv {
        argv: Vec::with_capacity(argv.len()),
        credential_args: Vec::new(),
        secrets: Vec::new(),
    };
    let mut after_flag: Option<String> = None;
    for (i, a) in argv.iter().enumerate() {
        let flag = after_flag.take();
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let mut replace = |why: &str, flag: Option<String>, value: &str| {
            out.credential_args.push(CredentialArg {
                index,
                flag,
                why: why.to_string(),
            });
            out.secrets.push(value.to_string());
            mcp_probe_schema::bundle::fingerprint(value.as_bytes())
        };
        if i == 0 {
            out.argv.push(a.clone());
            continue;
        }
        if let (Some(f), false) = (&flag, a.starts_with('-')) {
            let shown = replace("flag", Some(f.clone()), a);
            out.argv.push(shown);
            continue;
        }
        if a.starts_with('-') {
            if let Some((name, value)) = a.split_once('=') {
                if credential_flag(name) && !value.is_empty() {
                    let shown = replace("flag=value", Some(name.to_string()), value);
                    out.argv.push(format!("{name}={shown}"));
                    continue;
                }
                if high_entropy(value) {
                    let shown = replace("entropy", Some(name.to_string()), value);
                    out.argv.push(format!("{name}={shown}"));
                    continue;
                }
            } else if credential_flag(a) {
                after_flag = Some(a.clone());
            }
            out.argv.push(a.clone());
            continue;
        }
        if high_entropy(a) {
            let shown = replace("entropy", None, a);
            out.argv.push(shown);
            continue;
        }
        out.argv.push(a.clone());
    }
    out
}

/// One stdout line as the reader thread saw it.
#[derive(Debug)]
struct Line {
    at: Instant,
    bytes: Vec<u8>,
    length: u64,
}

impl Line {
    /// What the line costs in the queue and in the storage budget.
    fn cost(&self) -> u64 {
        self.bytes.len() as u64 + LINE_OVERHEAD
    }
}

/// The byte budget of the stdout queue: the reader waits while a line would pass
/// [`QUEUE_BYTES`] (a line alone always passes, so an oversized line cannot wedge it).
#[derive(Debug, Default)]
struct Flow {
    in_flight: Mutex<u64>,
    room: std::sync::Condvar,
    /// Set when the child handle goes: the reader stops waiting (and then stops).
    closed: std::sync::atomic::AtomicBool,
}

impl Flow {
    /// Wait for room for `cost`; false when the run is gone.
    fn acquire(&self, cost: u64) -> bool {
        use std::sync::atomic::Ordering;
        let mut g = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        while *g > 0 && *g + cost > QUEUE_BYTES {
            if self.closed.load(Ordering::SeqCst) {
                return false;
            }
            g = self
                .room
                .wait_timeout(g, Duration::from_millis(200))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        *g += cost;
        !self.closed.load(Ordering::SeqCst)
    }

    fn release(&self, cost: u64) {
        let mut g = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        *g = g.saturating_sub(cost);
        self.room.notify_all();
    }

    fn in_flight(&self) -> u64 {
        *self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        self.room.notify_all();
    }
}

/// What the reader thread sends: a line, or the end of stdout.
#[derive(Debug)]
enum FromStdout {
    Line(Line),
    Closed(Option<String>),
}

/// Why the child could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start {program:?}: {source}")]
pub struct SpawnError {
    /// The program as typed.
    pub program: String,
    /// The operating system's answer.
    #[source]
    pub source: std::io::Error,
}

/// How [`StdioChild::stop`] should end the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The end of a run: close stdin, give the server `grace` to exit, then signal.
    Polite(Duration),
    /// A deadline or a signal: close stdin and signal at once.
    Now,
}

/// A running stdio server.
pub struct StdioChild {
    child: Mutex<Option<Child>>,
    pid: u32,
    stdin: Mutex<Option<std::sync::mpsc::Sender<Vec<u8>>>>,
    /// The result of the last write the writer thread tried.
    write_error: Arc<Mutex<Option<String>>>,
    stdout: tokio::sync::Mutex<(mpsc::UnboundedReceiver<FromStdout>, Option<String>)>,
    /// The byte budget of the stdout queue.
    flow: Arc<Flow>,
    /// What storing more stdout lines may still cost over the run (see the module docs).
    keep_left: Mutex<u64>,
    stderr: Arc<Mutex<(Vec<u8>, u64)>>,
    /// The process facts once stopped (idempotent stop).
    stopped: Mutex<Option<(Option<ProcessExit>, String)>>,
    /// An exchange abandoned before its answer (its future was dropped: a deadline or a
    /// signal), with its legs, for the record written when the run stops.
    abandoned: Mutex<Option<Abandoned>>,
}

/// An exchange whose wait was dropped: see [`StdioChild::abandoned`].
#[derive(Debug)]
pub struct Abandoned {
    /// The legs it served.
    pub legs: Vec<LegId>,
    /// When it started.
    pub start: Instant,
    /// What was sent and read so far, with the error saying why it has no answer.
    pub exchange: StdioExchange,
}

/// An exchange being filled: the record, and the hash of its unkept lines so far.
struct Filling {
    x: StdioExchange,
    unkept_hash: Option<Sha256>,
}

impl Filling {
    fn new(sent: Option<Vec<u8>>) -> Filling {
        Filling {
            x: StdioExchange {
                sent,
                ..empty_exchange()
            },
            unkept_hash: None,
        }
    }

    /// Count `l` in `unkept` (`jsonrpc`: it parsed as JSON-RPC; `at_us` as in a line).
    fn count_unkept(&mut self, l: &Line, jsonrpc: bool, at_us: u64) {
        let u = self.x.unkept.get_or_insert_with(|| StdioUnkept {
            first_at_us: at_us,
            ..StdioUnkept::default()
        });
        u.lines += 1;
        u.bytes += l.length;
        u.jsonrpc += u64::from(jsonrpc);
        u.cut += u64::from((l.bytes.len() as u64) < l.length);
        u.last_at_us = at_us;
        let h = self.unkept_hash.get_or_insert_with(Sha256::new);
        h.update(&l.bytes);
        h.update(b"\n");
    }

    /// The record, with the hash of its unkept lines.
    fn done(mut self) -> StdioExchange {
        if let (Some(u), Some(h)) = (self.x.unkept.as_mut(), self.unkept_hash.take()) {
            u.sha256 = h.finalize().to_vec();
        }
        self.x
    }
}

/// The exchange being waited for; dropped unfinished, it leaves itself in the child's
/// `abandoned` slot.
struct InFlight<'a> {
    slot: &'a Mutex<Option<Abandoned>>,
    legs: &'a [LegId],
    start: Instant,
    x: Option<Filling>,
}

fn empty_exchange() -> StdioExchange {
    StdioExchange {
        sent: None,
        received: Vec::new(),
        error: None,
        unkept: None,
    }
}

impl InFlight<'_> {
    fn f(&mut self) -> &mut Filling {
        self.x.get_or_insert_with(|| Filling::new(None))
    }

    fn x(&mut self) -> &mut StdioExchange {
        &mut self.f().x
    }

    /// The finished exchange (the drop then leaves nothing behind).
    fn finish(mut self) -> StdioExchange {
        self.x
            .take()
            .map(Filling::done)
            .unwrap_or_else(empty_exchange)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(mut x) = self.x.take().map(Filling::done) {
            x.error = Some(TransportError {
                kind: ErrorKind::Timeout,
                message: "no answer before the run stopped (its deadline or a signal)".into(),
            });
            *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(Abandoned {
                legs: self.legs.to_vec(),
                start: self.start,
                exchange: x,
            });
        }
    }
}

impl std::fmt::Debug for StdioChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StdioChild(pid {})", self.pid)
    }
}

/// True for a line holding one JSON-RPC message or a batch of them.
pub fn is_jsonrpc(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Value>(bytes).is_ok_and(|v| jsonrpc_value(&v))
}

/// [`is_jsonrpc`] on a parsed line.
fn jsonrpc_value(v: &Value) -> bool {
    let one = |v: &Value| {
        v.as_object()
            .is_some_and(|o| o.get("jsonrpc").and_then(Value::as_str) == Some("2.0"))
    };
    match v {
        Value::Array(a) => !a.is_empty() && a.iter().all(one),
        v => one(v),
    }
}

impl StdioChild {
    /// Start `launch` with the clean environment; `cap` bounds each stored line and the
    /// stored stderr, `keep` what the stdout lines stored over the whole run may cost
    /// (module docs).
    pub fn spawn(launch: &Launch, cap: u64, keep: u64) -> Result<StdioChild, SpawnError> {
        let program = launch.argv.first().cloned().unwrap_or_default();
        let mut cmd = Command::new(&program);
        cmd.args(&launch.argv[1.min(launch.argv.len())..])
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for name in INHERITED {
            if let Some(v) = std::env::var_os(name) {
                cmd.env(name, v);
            }
        }
        for (n, v) in &launch.env {
            cmd.env(n, v);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().map_err(|source| SpawnError {
            program: program.clone(),
            source,
        })?;
        let pid = child.id();
        let cap = usize::try_from(cap).unwrap_or(usize::MAX);
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());

        let (in_tx, in_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let write_error = Arc::new(Mutex::new(None));
        if let Some(mut w) = stdin {
            let errs = write_error.clone();
            std::thread::spawn(move || {
                for msg in in_rx {
                    if let Err(e) = w.write_all(&msg).and_then(|()| w.flush()) {
                        *errs.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                        break;
                    }
                }
                // Dropping `w` closes the child's stdin.
            });
        }
        // Unbounded as a channel, bounded in bytes by `flow`.
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let flow = Arc::new(Flow::default());
        if let Some(r) = stdout {
            let flow = flow.clone();
            std::thread::spawn(move || read_lines(r, cap, &out_tx, &flow));
        }
        let err_buf = Arc::new(Mutex::new((Vec::new(), 0u64)));
        if let Some(mut r) = stderr {
            let buf = err_buf.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = r.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    let mut g = buf.lock().unwrap_or_else(|p| p.into_inner());
                    let room = cap.saturating_sub(g.0.len()).min(n);
                    g.0.extend_from_slice(&chunk[..room]);
                    g.1 += n as u64;
                }
            });
        }
        Ok(StdioChild {
            child: Mutex::new(Some(child)),
            pid,
            stdin: Mutex::new(Some(in_tx)),
            write_error,
            stdout: tokio::sync::Mutex::new((out_rx, None)),
            flow,
            keep_left: Mutex::new(keep),
            stderr: err_buf,
            stopped: Mutex::new(None),
            abandoned: Mutex::new(None),
        })
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Write `sent` (one message; a newline is appended) and read stdout lines until the
    /// JSON-RPC response to `await_id` arrives, stdout closes, or `timeout` passes. With
    /// no `await_id` (a notification) nothing is awaited. Returns the record's start, its
    /// duration, the exchange and the answer.
    pub async fn exchange(
        &self,
        legs: &[LegId],
        sent: &[u8],
        await_id: Option<&Value>,
        timeout: Duration,
    ) -> (Instant, Duration, StdioExchange, Option<Value>) {
        let start = Instant::now();
        let mut f = InFlight {
            slot: &self.abandoned,
            legs,
            start,
            x: Some(Filling::new(Some(sent.to_vec()))),
        };
        let mut guard = self.stdout.lock().await;
        // Lines that arrived while no request was pending belong before this one: the
        // caller records them with `drain_now` first; whatever is still queued is read here.
        let mut line = sent.to_vec();
        line.push(b'\n');
        let queued = self
            .stdin
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|tx| tx.send(line).is_ok());
        if !queued {
            f.x().error = Some(TransportError {
                kind: ErrorKind::Reset,
                message: "the server's stdin is closed".into(),
            });
            return (start, start.elapsed(), f.finish(), None);
        }
        let Some(id) = await_id else {
            return (start, start.elapsed(), f.finish(), None);
        };
        let deadline = tokio::time::Instant::now() + timeout;
        let mut read = 0u64;
        let answer = loop {
            if let Some(why) = &guard.1 {
                f.x().error = Some(closed(why, &self.write_error));
                break None;
            }
            // A server that writes without pause keeps `recv` ready: the deadline is
            // checked on every line, and the runtime (the per-target deadline, a signal)
            // gets its turn every few lines.
            read += 1;
            if read % YIELD_EVERY == 0 {
                tokio::task::yield_now().await;
            }
            let next = if tokio::time::Instant::now() >= deadline {
                Err(())
            } else {
                tokio::time::timeout_at(deadline, guard.0.recv())
                    .await
                    .map_err(|_| ())
            };
            match next {
                Err(()) => {
                    f.x().error = Some(TransportError {
                        kind: ErrorKind::Timeout,
                        message: format!(
                            "no response to id {id} within {} ms",
                            timeout.as_millis()
                        ),
                    });
                    break None;
                }
                Ok(None) => guard.1 = Some("stdout closed".into()),
                Ok(Some(FromStdout::Closed(why))) => {
                    guard.1 = Some(why.unwrap_or_else(|| "stdout closed".into()));
                }
                Ok(Some(FromStdout::Line(l))) => {
                    if let Some(m) = self.push(f.f(), start, l, Some(id)) {
                        break Some(m);
                    }
                }
            }
        };
        (start, start.elapsed(), f.finish(), answer)
    }

    /// The exchange whose wait was dropped before its answer (a deadline or a signal),
    /// once: its legs, start, and what was sent and read, with a `timeout` error saying
    /// the run stopped.
    pub fn abandoned(&self) -> Option<Abandoned> {
        self.abandoned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// The stdout lines queued now, without waiting: `None` when there is none (or an
    /// exchange holds the stream). The record starts at its first line. At most what was
    /// queued when it started is taken: a server writing without pause refills the queue
    /// as it drains.
    pub fn drain_now(&self) -> Option<(Instant, StdioExchange)> {
        let mut guard = self.stdout.try_lock().ok()?;
        let limit = self.flow.in_flight();
        let mut taken = 0u64;
        let mut filling: Option<(Instant, Filling)> = None;
        while taken < limit {
            let Ok(m) = guard.0.try_recv() else { break };
            match m {
                FromStdout::Line(l) => {
                    taken += l.cost();
                    let (start, f) = filling.get_or_insert_with(|| (l.at, Filling::new(None)));
                    let start = *start;
                    self.push(f, start, l, None);
                }
                FromStdout::Closed(why) => {
                    guard.1 = Some(why.unwrap_or_else(|| "stdout closed".into()));
                }
            }
        }
        let (start, f) = filling?;
        Some((start, f.done()))
    }

    /// Take `cost` from the run's storage budget; false when it is spent.
    fn keep(&self, cost: u64, always: bool) -> bool {
        let mut left = self.keep_left.lock().unwrap_or_else(|p| p.into_inner());
        if *left < cost && !always {
            *left = 0;
            return false;
        }
        *left = left.saturating_sub(cost);
        true
    }

    /// Add `l` to the exchange being filled: stored while the run's budget lasts (the
    /// answer to `id` always), else counted in `unkept`. Returns the JSON-RPC response
    /// to `id` when the line holds it.
    fn push(&self, f: &mut Filling, start: Instant, l: Line, id: Option<&Value>) -> Option<Value> {
        let cost = l.cost();
        self.flow.release(cost);
        let whole = (l.bytes.len() as u64) == l.length;
        let parsed = whole
            .then(|| serde_json::from_slice::<Value>(&l.bytes).ok())
            .flatten();
        let jsonrpc = parsed.as_ref().is_some_and(jsonrpc_value);
        let answer = match (id, parsed) {
            (Some(id), Some(v)) if jsonrpc => {
                let msgs = match v {
                    Value::Array(a) => a,
                    v => vec![v],
                };
                mcp_probe_schema::derive::response_to(&msgs, id).cloned()
            }
            _ => None,
        };
        let at_us = l.at.saturating_duration_since(start).as_micros() as u64;
        if self.keep(cost, answer.is_some()) {
            f.x.received.push(StdioLine {
                at_us,
                bytes: l.bytes,
                length: l.length,
                jsonrpc,
            });
        } else {
            f.count_unkept(&l, jsonrpc, at_us);
        }
        answer
    }

    /// End the process (see [`Stop`]) and reap it; idempotent. Returns how it ended and
    /// what stopped it (`exited`, `stdin-closed`, `terminated`, `killed`).
    pub fn stop(&self, how: Stop) -> (Option<ProcessExit>, String) {
        let mut done = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = done.as_ref() {
            return d.clone();
        }
        let Some(mut child) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return (None, "not started".into());
        };
        // Ended on its own: exited already, or closed its stdout before the collector
        // closed its stdin (it is on its way out).
        let stdout_closed = self
            .stdout
            .try_lock()
            .map(|g| g.1.is_some())
            .unwrap_or(false);
        let already = matches!(child.try_wait(), Ok(Some(_))) || stdout_closed;
        // Closing stdin is the polite way to end a stdio server.
        self.stdin.lock().unwrap_or_else(|p| p.into_inner()).take();
        let mut ended_by = "exited";
        let mut status = if already {
            wait_for(&mut child, Duration::from_millis(200))
        } else {
            None
        };
        if status.is_none() {
            if let Stop::Polite(grace) = how {
                status = wait_for(&mut child, grace);
                ended_by = if already { "exited" } else { "stdin-closed" };
            }
        }
        if status.is_none() {
            signal_group(self.pid, false);
            status = wait_for(&mut child, Duration::from_millis(500));
            ended_by = "terminated";
        }
        if status.is_none() {
            signal_group(self.pid, true);
            let _ = child.kill();
            status = child.wait().ok();
            ended_by = "killed";
        } else {
            // The server exited; anything it left in its group goes too.
            signal_group(self.pid, true);
        }
        let exit = status.map(|s| exit_of(&s));
        let out = (exit, ended_by.to_string());
        *done = Some(out.clone());
        out
    }

    /// The exit status once the process ended, waiting at most `wait` for it.
    pub fn exit_within(&self, wait: Duration) -> Option<ProcessExit> {
        let mut g = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let child = g.as_mut()?;
        wait_for(child, wait).map(|s| exit_of(&s))
    }

    /// The stored stderr and the bytes it carried.
    pub fn stderr(&self) -> (Vec<u8>, u64) {
        self.stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The process record once stopped: `argv` and `env_names` as they may be recorded.
    pub fn process_record(
        &self,
        shown: &ShownArgv,
        env_names: Vec<String>,
        how: Stop,
    ) -> StdioProcess {
        let (exit, ended_by) = self.stop(how);
        // The readers hit end of file once the group is gone; a moment for the last
        // stderr bytes to land.
        std::thread::sleep(Duration::from_millis(20));
        let (stderr, stderr_length) = self.stderr();
        StdioProcess {
            argv: shown.argv.clone(),
            credential_args: shown.credential_args.clone(),
            env_names,
            inherited: inherited_names(),
            pid: Some(self.pid),
            spawn_error: None,
            exit,
            ended_by,
            stderr,
            stderr_length,
        }
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        let _ = self.stop(Stop::Now);
        self.flow.close();
    }
}

/// The names of [`INHERITED`] set in the collector's environment.
pub fn inherited_names() -> Vec<String> {
    INHERITED
        .iter()
        .filter(|n| std::env::var_os(n).is_some())
        .map(|n| n.to_string())
        .collect()
}

fn closed(why: &str, write_error: &Mutex<Option<String>>) -> TransportError {
    let w = write_error
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    TransportError {
        kind: ErrorKind::Reset,
        message: match w {
            Some(w) => format!("{why} (writing stdin failed: {w})"),
            None => format!("{why} before the response"),
        },
    }
}

/// The stdout reader: lines up to `cap` stored bytes each (the whole length counted),
/// handed over within `flow`'s byte budget. A line without end is never held beyond
/// `cap` bytes.
fn read_lines(r: impl Read, cap: usize, tx: &mpsc::UnboundedSender<FromStdout>, flow: &Flow) {
    let send = |l: Line| flow.acquire(l.cost()) && tx.send(FromStdout::Line(l)).is_ok();
    let mut r = std::io::BufReader::with_capacity(64 << 10, r);
    let mut cur: Vec<u8> = Vec::new();
    let mut length: u64 = 0;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(FromStdout::Closed(Some(format!(
                    "reading stdout failed: {e}"
                ))));
                return;
            }
        };
        if buf.is_empty() {
            if length > 0 {
                let _ = send(Line {
                    at: Instant::now(),
                    bytes: std::mem::take(&mut cur),
                    length,
                });
            }
            let _ = tx.send(FromStdout::Closed(None));
            return;
        }
        let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let room = cap.saturating_sub(cur.len()).min(chunk.len());
        cur.extend_from_slice(&chunk[..room]);
        length += chunk.len() as u64;
        let used = newline.unwrap_or(buf.len());
        r.consume(used);
        if newline.is_some() {
            if cur.last() == Some(&b'\r') && (cur.len() as u64) == length {
                cur.pop();
                length -= 1;
            }
            let line = Line {
                at: Instant::now(),
                bytes: std::mem::take(&mut cur),
                length,
            };
            length = 0;
            if !send(line) {
                return;
            }
        }
    }
}

fn wait_for(child: &mut Child, grace: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + grace;
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            _ => return None,
        }
    }
}

/// SIGTERM (or SIGKILL) to the child's process group (the child leads it).
fn signal_group(pid: u32, kill: bool) {
    #[cfg(unix)]
    {
        use rustix::process::{kill_process_group, Pid, Signal};
        let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
            return;
        };
        let sig = if kill { Signal::KILL } else { Signal::TERM };
        let _ = kill_process_group(pid, sig);
    }
    #[cfg(not(unix))]
    let _ = (pid, kill);
}

fn exit_of(s: &std::process::ExitStatus) -> ProcessExit {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        ProcessExit {
            code: s.code(),
            signal: s.signal(),
        }
    }
    #[cfg(not(unix))]
    ProcessExit {
        code: s.code(),
        signal: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn credential_arguments_are_replaced_and_named() {
        let key = "sk-9fQ2xLr7TzP4mVb8NcW1yHd6";
        let s = shown_argv(&argv(&[
            "python3",
            "server.py",
            "--api-key",
            "hunter22",
            &format!("--token={key}"),
            "--verbose",
            "--port",
            "8080",
            key,
            "/very/long/path/to/some/where/file.py",
        ]));
        assert_eq!(s.argv[0], "python3");
        assert_eq!(s.argv[1], "server.py");
        assert!(s.argv[3].starts_with("redacted:sha256:"), "{:?}", s.argv);
        assert!(s.argv[4].starts_with("--token=redacted:sha256:"));
        assert_eq!(&s.argv[5..8], ["--verbose", "--port", "8080"]);
        assert!(s.argv[8].starts_with("redacted:sha256:"));
        assert_eq!(s.argv[9], "/very/long/path/to/some/where/file.py");
        let whys: Vec<(u32, Option<&str>, &str)> = s
            .credential_args
            .iter()
            .map(|c| (c.index, c.flag.as_deref(), c.why.as_str()))
            .collect();
        assert_eq!(
            whys,
            [
                (3, Some("--api-key"), "flag"),
                (4, Some("--token"), "flag=value"),
                (8, None, "entropy")
            ]
        );
        assert_eq!(s.secrets, ["hunter22", key, key]);
        let all = s.argv.join(" ");
        assert!(!all.contains("hunter22") && !all.contains(key));
    }

    #[test]
    fn ordinary_arguments_stay() {
        let a = argv(&["node", "dist/index.js", "--stdio", "--name", "files", "-v"]);
        let s = shown_argv(&a);
        assert_eq!(s.argv, a);
        assert!(s.credential_args.is_empty());
        assert!(!high_entropy("aaaaaaaaaaaaaaaaaaaaaaaa"));
        assert!(high_entropy("Zx8Qp2Lm9Rt4Vw7Ny3Kb6Hd1"));
    }

    /// A shell "server": a log line, then for the first stdin line one answer, then a
    /// grandchild that ignores stdin's end (the group must still go).
    #[cfg(unix)]
    #[test]
    fn lines_in_order_then_the_whole_group_is_stopped_and_reaped() {
        let script = r#"echo "log: starting"; read line; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; echo "err" >&2; sleep 30"#;
        let launch = Launch {
            argv: argv(&["/bin/sh", "-c", script]),
            env: vec![("MCP_PROBE_TEST".into(), "1".into())],
        };
        let child = StdioChild::spawn(&launch, 1 << 16, u64::MAX).expect("spawns");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let (_, _, x, answer) = rt.block_on(child.exchange(
            &[],
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            Some(&Value::from(1)),
            Duration::from_secs(10),
        ));
        assert_eq!(answer.expect("answered")["result"], serde_json::json!({}));
        let lines: Vec<(&[u8], bool)> = x
            .received
            .iter()
            .map(|l| (l.bytes.as_slice(), l.jsonrpc))
            .collect();
        assert_eq!(lines[0], (&b"log: starting"[..], false));
        assert!(lines[1].1, "{lines:?}");
        assert_eq!(x.error, None);
        let pid = child.pid();
        let (exit, ended_by) = child.stop(Stop::Polite(Duration::from_millis(100)));
        assert_eq!(ended_by, "terminated", "{exit:?}");
        assert_eq!(exit.and_then(|e| e.signal), Some(15));
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "reaped"
        );
        // The `sleep` grandchild was in the server's group: gone too (reaped by init).
        std::thread::sleep(Duration::from_millis(100));
        let alive = std::fs::read_dir("/proc")
            .expect("/proc")
            .filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
            .any(|stat| {
                let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
                let f: Vec<&str> = rest.split_whitespace().collect();
                f.get(2) == Some(&pid.to_string().as_str()) && f.first() != Some(&"Z")
            });
        assert!(!alive, "a process of the group {pid} runs on");
        let (stderr, len) = child.stderr();
        assert_eq!((stderr.as_slice(), len), (&b"err\n"[..], 4));
        // Idempotent.
        assert_eq!(child.stop(Stop::Now).1, "terminated");
    }

    #[test]
    fn jsonrpc_lines_are_told_from_other_lines() {
        assert!(is_jsonrpc(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(is_jsonrpc(br#"[{"jsonrpc":"2.0","method":"x"}]"#));
        assert!(!is_jsonrpc(b"INFO starting server"));
        assert!(!is_jsonrpc(br#"{"level":"info"}"#));
        assert!(!is_jsonrpc(b""));
        assert!(!is_jsonrpc(b"[]"));
    }
}
