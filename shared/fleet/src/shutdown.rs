//! Graceful shutdown: SIGTERM or Ctrl-C flips one watch channel that every loop selects on.

use tokio::sync::watch;

/// A cloneable view of "shutdown requested".
#[derive(Clone)]
pub struct Shutdown {
    receiver: watch::Receiver<bool>,
}

impl Shutdown {
    /// Listens for SIGTERM and Ctrl-C; also returns the sender so a caller (a test, a one-shot
    /// command) can trigger shutdown itself.
    pub fn on_signals() -> (Shutdown, watch::Sender<bool>) {
        let (sender, receiver) = watch::channel(false);
        let trigger = sender.clone();
        tokio::spawn(async move {
            let terminate = async {
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(mut s) => {
                        s.recv().await;
                    }
                    Err(_) => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = terminate => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            tracing::info!("shutdown requested");
            let _ = trigger.send(true);
        });
        (Shutdown { receiver }, sender)
    }

    pub fn from_receiver(receiver: watch::Receiver<bool>) -> Shutdown {
        Shutdown { receiver }
    }

    pub fn requested(&self) -> bool {
        *self.receiver.borrow()
    }

    /// Resolves once shutdown is requested.
    pub async fn wait(mut self) {
        let _ = self.receiver.wait_for(|stop| *stop).await;
    }
}
