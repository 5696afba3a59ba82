//! Profile batches whose results are still leaving the worker (docs/fleet.md "Pipelining").
//!
//! A batch's tail — publish its events, commit its transaction, refresh the cache — runs as a
//! task of its own while the worker decodes, loads and evaluates the next batch. At most
//! [`InFlight::MAX`] tails run at once, and they overlap only where order does not matter:
//! a tail publishes as soon as it starts, but commits (and writes the cache) only after the
//! tail before it did. So PostgreSQL always holds a prefix of the stream, and a crash repeats
//! events (same idempotency keys) but never loses one, as without pipelining.
//!
//! Until its commit, a batch's users are read from here, not from PostgreSQL.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Arc;

use fleet::offsets::Offsets;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::users::state::UserState;

/// The users a batch changed, as it leaves them.
pub type ChangedUsers = Arc<Vec<(String, UserState)>>;

/// Told by a tail once its commit and cache writes are done; the next tail commits after it.
pub type Committed = oneshot::Receiver<()>;

#[derive(Default)]
pub struct InFlight {
    batches: VecDeque<Batch>,
    /// The latest tail's signal, for the next tail to wait on.
    last: Option<Committed>,
}

struct Batch {
    task: JoinHandle<anyhow::Result<Offsets>>,
    users: ChangedUsers,
}

impl InFlight {
    /// Tails running at once. Commits are one after another, but publishing is not: a batch
    /// publishes as soon as it is evaluated while earlier ones commit, instead of waiting for
    /// the oldest commit. A tail lives through its acknowledgements and its turn to commit,
    /// several batch cycles under load, so with four the loop still waited for room now and
    /// then, and the updates queued behind it waited too (docs/fleet.md "Pipelining").
    pub const MAX: usize = 8;

    /// Each user some batch in flight changed, in its latest state.
    pub fn users(&self) -> HashMap<&str, &UserState> {
        let mut latest = HashMap::new();
        for batch in &self.batches {
            for (id, user) in batch.users.iter() {
                latest.insert(id.as_str(), user);
            }
        }
        latest
    }

    /// Waits until fewer than [`InFlight::MAX`] tails run; returns the offsets they committed.
    pub async fn make_room(&mut self) -> anyhow::Result<Offsets> {
        let mut committed = Offsets::new();
        while self.batches.len() >= Self::MAX {
            committed.extend(self.finish_oldest().await?);
        }
        Ok(committed)
    }

    /// Starts a batch's tail: `tail(after, done)` must commit only once `after` (the previous
    /// tail's signal, if any) is told, and tell `done` when its own commit is through.
    pub fn start<F, Fut>(&mut self, users: ChangedUsers, tail: F)
    where
        F: FnOnce(Option<Committed>, oneshot::Sender<()>) -> Fut,
        Fut: Future<Output = anyhow::Result<Offsets>> + Send + 'static,
    {
        let (done, committed) = oneshot::channel();
        let after = self.last.replace(committed);
        let running = metrics::gauge!(fleet::metrics::BATCHES_IN_FLIGHT);
        running.increment(1.0);
        let tail = tail(after, done);
        let task = tokio::spawn(async move {
            let finished = tail.await;
            running.decrement(1.0);
            finished
        });
        self.batches.push_back(Batch { task, users });
    }

    /// Waits for every tail; returns the offsets they committed.
    pub async fn settle(&mut self) -> anyhow::Result<Offsets> {
        let mut committed = Offsets::new();
        while !self.batches.is_empty() {
            committed.extend(self.finish_oldest().await?);
        }
        self.last = None;
        Ok(committed)
    }

    async fn finish_oldest(&mut self) -> anyhow::Result<Offsets> {
        let Some(Batch { task, users }) = self.batches.pop_front() else {
            return Ok(Offsets::new());
        };
        let committed = task.await?;
        // Often the last hold on the batch's users: freeing them (profiles, verdict maps) took
        // a third of the loop's time at 5,000 updates/s, so it is done on the pass threads,
        // off the loop that reads the next batch (docs/fleet.md "Where the time goes").
        rayon::spawn(move || drop(users));
        committed
    }
}

/// Waits for the previous tail's commit; an error if it failed (this batch must not commit
/// before it, and will be repeated with it).
pub async fn after_previous(previous: Option<Committed>) -> anyhow::Result<()> {
    match previous {
        Some(committed) => committed.await.map_err(|_| {
            anyhow::anyhow!(
                "the micro-batch before this one was not committed, so neither is this one"
            )
        }),
        None => Ok(()),
    }
}
