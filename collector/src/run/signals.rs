//! The stopping signals (SIGINT, SIGTERM, SIGHUP), registered once for the run.

use super::cli::Signal;

/// The stopping signals, registered once for the whole run (a signal that arrives
/// between two turns of the select loop is not lost).
pub(super) struct Signals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    pub(super) fn register() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Signals {
                int: signal(SignalKind::interrupt()).ok(),
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The next stopping signal.
    pub(super) async fn next(&mut self) -> Signal {
        #[cfg(unix)]
        {
            async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
                let delivered = match s {
                    Some(s) => s.recv().await.is_some(),
                    None => false,
                };
                if !delivered {
                    // Not registered (or the stream ended): this signal never stops the run.
                    std::future::pending::<()>().await;
                }
            }
            tokio::select! {
                _ = one(&mut self.int) => Signal::Int,
                _ = one(&mut self.term) => Signal::Term,
                _ = one(&mut self.hup) => Signal::Hup,
            }
        }
        #[cfg(not(unix))]
        {
            match tokio::signal::ctrl_c().await {
                Ok(()) => Signal::Int,
                Err(_) => std::future::pending().await,
            }
        }
    }
}
