//! Rule and scheme ids, held once for the process's life.
//!
//! Every stored verdict of every user a batch loads names its rule and scheme: about a
//! thousand per user. As shared strings (`Arc<str>`), loading and freeing them counted every
//! name up and down, and the pass threads fought over the same counters (docs/fleet.md "Where
//! the time goes"). A `&'static str` costs nothing to copy or drop. The set is bounded by the
//! rule versions the worker has loaded (a few hundred kilobytes for thousands of versions): a
//! name is kept once however often the rules are reloaded.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// `name`, held for the process's life; the same reference for every equal name.
pub fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .expect("not poisoned");
    if let Some(&held) = names.get(name) {
        return held;
    }
    let held: &'static str = Box::leak(name.into());
    names.insert(held);
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_equal_name_is_held_once() {
        let first = intern("scheme.names.test");
        let again = intern(&String::from("scheme.names.test"));
        assert_eq!(first, "scheme.names.test");
        assert!(std::ptr::eq(first, again));
        assert!(!std::ptr::eq(first, intern("scheme.names.other")));
    }
}
