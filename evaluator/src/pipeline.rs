//! Running one pure function over many inputs on several threads, with its results
//! handed back in input order (`--jobs`).
//!
//! Grading a bundle and verifying one are pure functions of the bundle's bytes (and the
//! definition, trust keys and policy, shared read-only), so bundles can be graded on any
//! thread. What must not change with the number of threads is the output: every report,
//! every line of `verify` and every message on stderr comes out in the order of the
//! arguments. [`for_each_in_order`] therefore separates the two: worker threads run
//! `map` on the inputs, and the calling thread receives each result through `each` in
//! input order, as soon as it and every result before it are done. `each` is where output
//! is written, so nothing written depends on which thread finished first; a run with
//! `jobs` 1 runs everything on the calling thread and is the reference the tests compare
//! with.
//!
//! Memory is bounded by `jobs`, not by the number of inputs: a worker takes input `i`
//! only when `i` is less than [`window`]`(jobs)` past the next result to deliver, so at
//! most that many results are computed or waiting at once, however many inputs follow.
//! A slow input holds back the others by at most that window.

use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The default `--jobs`: the number of cores this process may run on (1 when that cannot
/// be told).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// How many inputs may be in work or waiting for delivery at once with `jobs` workers:
/// twice the workers, so a worker that finishes never waits for the delivery of the one
/// result before its own.
pub fn window(jobs: usize) -> usize {
    jobs.max(1) * 2
}

/// The shared state of one run: which input is handed out next, which result is
/// delivered next, the results done but not yet delivered.
struct State<R> {
    next_taken: usize,
    next_delivered: usize,
    done: BTreeMap<usize, R>,
    /// Set when `each` failed or a worker panicked: workers take nothing more.
    stop: bool,
    /// The panic of the earliest input whose `map` panicked, resumed on the calling
    /// thread once every result before it was delivered.
    panicked: Option<(usize, Box<dyn std::any::Any + Send>)>,
    /// Workers waiting for room in the window.
    waiting: usize,
}

impl<R> State<R> {
    /// Take the next of `len` inputs to map, when the run goes on, one is left and the
    /// window (`window` results ahead of the next delivered) has room for it.
    fn take(&mut self, len: usize, window: usize) -> Option<usize> {
        if self.stop || self.next_taken >= len || self.next_taken >= self.next_delivered + window {
            return None;
        }
        self.next_taken += 1;
        Some(self.next_taken - 1)
    }
}

fn lock<R>(m: &Mutex<State<R>>) -> MutexGuard<'_, State<R>> {
    // A panic is caught before it could poison the lock (see `worker`); the state stays
    // consistent either way.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Run `map(index, &inputs[index])` for every input on `jobs` threads (at least one) and
/// call `each(index, result)` on the calling thread for every result, in input order, as
/// each becomes deliverable.
///
/// `jobs` 1 (or a single input) runs everything on the calling thread, input after input:
/// no thread is started. With more, `jobs - 1` worker threads and the calling thread run
/// `map`, and the calling thread delivers between its own. The first error returned by
/// `each` stops the run: no further input is taken, the workers finish the inputs they
/// hold (their results are dropped) and the error is returned; `each` is not called
/// again. A panic in `map` is resumed on the calling thread once the workers have
/// stopped, after every result before it was delivered (as a one-job run would).
///
/// At most [`window`]`(jobs)` results exist at once (in work or waiting for `each`).
pub fn for_each_in_order<T, R, E>(
    inputs: &[T],
    jobs: usize,
    map: impl Fn(usize, &T) -> R + Sync,
    mut each: impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
{
    let jobs = jobs.max(1).min(inputs.len().max(1));
    if jobs == 1 {
        for (i, input) in inputs.iter().enumerate() {
            each(i, map(i, input))?;
        }
        return Ok(());
    }
    let window = window(jobs);
    let state = Mutex::new(State {
        next_taken: 0,
        next_delivered: 0,
        done: BTreeMap::new(),
        stop: false,
        panicked: None,
        waiting: 0,
    });
    // Two conditions, each signalled only when its waiter can go on: the calling thread
    // waits for the result it delivers next (`ready`), a worker for room in the window
    // (`room`). A result that is not the next one wakes nobody, and a delivery wakes one
    // worker only if one waits: with one condition for both, every result woke every
    // thread, most of them to sleep again (about 1,400 switches for 520 bundles).
    let ready = Condvar::new();
    let room = Condvar::new();
    // Map input `i` (taken already) and leave its result for delivery.
    let run = |i: usize| {
        let result = panic::catch_unwind(AssertUnwindSafe(|| map(i, &inputs[i])));
        let mut s = lock(&state);
        let next = i == s.next_delivered;
        match result {
            Ok(r) => {
                s.done.insert(i, r);
                drop(s);
                if next {
                    ready.notify_one();
                }
            }
            Err(p) => {
                s.stop = true;
                // The earliest panic by input is the one a one-job run would have hit.
                if s.panicked.as_ref().is_none_or(|(at, _)| i < *at) {
                    s.panicked = Some((i, p));
                }
                drop(s);
                ready.notify_one();
                room.notify_all();
            }
        }
    };
    let worker = || loop {
        let i = {
            let mut s = lock(&state);
            loop {
                if s.stop || s.next_taken >= inputs.len() {
                    return;
                }
                if let Some(i) = s.take(inputs.len(), window) {
                    break i;
                }
                s.waiting += 1;
                s = room.wait(s).unwrap_or_else(PoisonError::into_inner);
                s.waiting -= 1;
            }
        };
        run(i);
    };
    let mut failed = None;
    std::thread::scope(|scope| {
        // The calling thread is one of the `jobs`: it maps an input itself whenever the
        // next result is not there to deliver and the window has room, and sleeps only
        // when neither, so delivering costs no thread switch per result.
        for _ in 1..jobs {
            scope.spawn(worker);
        }
        let mut s = lock(&state);
        while s.next_delivered < inputs.len() {
            let i = s.next_delivered;
            if let Some(r) = s.done.remove(&i) {
                drop(s);
                // The result counts against the window until `each` has it dropped:
                // the window moves on only then.
                let delivered = each(i, r);
                s = lock(&state);
                if let Err(e) = delivered {
                    failed = Some(e);
                    break;
                }
                s.next_delivered += 1;
                if s.waiting > 0 {
                    room.notify_one();
                }
            } else if s.panicked.as_ref().is_some_and(|(at, _)| *at == i) {
                // Every input before it was taken before it, so each was delivered.
                break;
            } else if let Some(k) = s.take(inputs.len(), window) {
                drop(s);
                run(k);
                s = lock(&state);
            } else {
                s = ready.wait(s).unwrap_or_else(PoisonError::into_inner);
            }
        }
        s.stop = true;
        s.done.clear();
        drop(s);
        room.notify_all();
    });
    let mut s = lock(&state);
    if let Some(e) = failed {
        return Err(e);
    }
    if let Some((_, p)) = s.panicked.take() {
        drop(s);
        panic::resume_unwind(p);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_arrive_in_input_order_whatever_the_jobs() {
        let inputs: Vec<u64> = (0..200).collect();
        for jobs in [1, 2, 3, 8] {
            let mut seen = Vec::new();
            for_each_in_order(
                &inputs,
                jobs,
                |i, x| {
                    // Later inputs finish first more often than not.
                    std::thread::sleep(std::time::Duration::from_micros((200 - *x) % 7 * 50));
                    (i, x * x)
                },
                |i, (j, sq)| {
                    assert_eq!(i, j);
                    seen.push(sq);
                    Ok::<_, ()>(())
                },
            )
            .expect("no error");
            assert_eq!(
                seen,
                inputs.iter().map(|x| x * x).collect::<Vec<_>>(),
                "{jobs}"
            );
        }
    }

    #[test]
    fn no_more_than_the_window_is_held_at_once() {
        let inputs: Vec<usize> = (0..300).collect();
        let live = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        struct Held<'a>(&'a AtomicUsize);
        impl Drop for Held<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        for_each_in_order(
            &inputs,
            3,
            |_, x| {
                let now = live.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                if x % 50 == 0 {
                    // A slow input: the others may not run away from it.
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Held(&live)
            },
            |_, held| {
                drop(held);
                Ok::<_, ()>(())
            },
        )
        .expect("no error");
        assert!(most.load(Ordering::SeqCst) <= window(3), "{most:?}");
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn the_first_error_of_each_stops_the_run() {
        let inputs: Vec<usize> = (0..1000).collect();
        let mapped = AtomicUsize::new(0);
        let mut delivered = Vec::new();
        let r = for_each_in_order(
            &inputs,
            2,
            |_, x| {
                mapped.fetch_add(1, Ordering::SeqCst);
                *x
            },
            |i, x| {
                if i == 10 {
                    return Err(format!("stop at {x}"));
                }
                delivered.push(x);
                Ok(())
            },
        );
        assert_eq!(r, Err("stop at 10".to_string()));
        assert_eq!(delivered, (0..10).collect::<Vec<_>>());
        assert!(mapped.load(Ordering::SeqCst) <= 10 + 1 + window(2));
    }

    #[test]
    fn a_panic_in_map_reaches_the_caller_after_the_results_before_it() {
        let inputs: Vec<usize> = (0..100).collect();
        let mut delivered = Vec::new();
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            for_each_in_order(
                &inputs,
                2,
                |_, x| {
                    assert!(*x != 40, "input 40");
                    *x
                },
                |_, x| {
                    delivered.push(x);
                    Ok::<_, ()>(())
                },
            )
        }));
        assert!(caught.is_err());
        assert_eq!(delivered, (0..40).collect::<Vec<_>>());
    }

    #[test]
    fn no_input_no_call() {
        let r = for_each_in_order(
            &[] as &[u8],
            4,
            |_, _| unreachable!(),
            |_, ()| Err::<(), _>(()),
        );
        assert_eq!(r, Ok(()));
    }
}
