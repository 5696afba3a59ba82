//! Per-record and per-user work of a micro-batch spread over the process's pool of threads
//! (rayon's, which live as long as the process). The consume loop waits for it: what it does
//! itself per record is what every record of the next batch queues behind, so the CPU work
//! of a batch runs on every core instead (docs/fleet.md "Where the time goes").
//!
//! A thread spawned per batch would start with an empty allocator heap and leave its pages to be
//! reclaimed when it ended, which cost more than the work itself.

use rayon::prelude::*;

/// The fewest items a task of the pool takes: fewer than twice this many run on the calling
/// thread, where handing work over would cost more than it saves.
const PER_TASK: usize = 32;

/// `f` of each item, in the items' order.
pub fn map<T: Send, U: Send>(items: Vec<T>, f: impl Fn(T) -> U + Sync + Send) -> Vec<U> {
    if items.len() < 2 * PER_TASK {
        items.into_iter().map(f).collect()
    } else {
        items
            .into_par_iter()
            .with_min_len(PER_TASK)
            .map(f)
            .collect()
    }
}

/// `f` on each item in place.
pub fn for_each_mut<T: Send>(items: &mut [T], f: impl Fn(&mut T) + Sync + Send) {
    if items.len() < 2 * PER_TASK {
        items.iter_mut().for_each(f);
    } else {
        items.par_iter_mut().with_min_len(PER_TASK).for_each(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_on_the_pool_and_off_it() {
        for count in [0, 1, 2 * PER_TASK - 1, 2 * PER_TASK, 10_000] {
            let items: Vec<usize> = (0..count).collect();
            let doubled = map(items.clone(), |n| 2 * n);
            assert_eq!(doubled, items.iter().map(|n| 2 * n).collect::<Vec<_>>());
            let mut each = items.clone();
            for_each_mut(&mut each, |n| *n += 1);
            assert_eq!(each, items.iter().map(|n| n + 1).collect::<Vec<_>>());
        }
    }
}
