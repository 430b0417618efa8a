//! When a caller wants an answer by: a wall-clock instant, a flag another thread may raise, or
//! both.
//!
//! Budgets of work (search items, automaton states, completion nodes) bound every step, but
//! how long a budget takes depends on the machine; a server needs a bound in seconds, and a
//! way to stop a call from outside (a client hung up). A [`Deadline`] is polled by the long
//! loops (the emptiness search, the lexeme automaton's construction, the completion search,
//! the per-effect checks of a mask) every few thousand steps, so polling costs nothing
//! measurable; a call that meets it answers `unknown` (or [`CompletionError::Budget`]), never
//! a guess.
//!
//! [`CompletionError::Budget`]: crate::checker::CompletionError::Budget

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A wall-clock instant and/or a cancellation flag; the default never expires.
#[derive(Clone, Debug, Default)]
pub struct Deadline {
    at: Option<Instant>,
    cancel: Option<Arc<AtomicBool>>,
}

impl Deadline {
    /// A deadline that never expires.
    pub fn never() -> Self {
        Deadline::default()
    }

    /// Expires at `at`.
    pub fn at(at: Instant) -> Self {
        Deadline {
            at: Some(at),
            cancel: None,
        }
    }

    /// Expires `after` from now.
    pub fn after(after: Duration) -> Self {
        Self::at(Instant::now() + after)
    }

    /// Also expires once `flag` is set (by any thread).
    pub fn with_cancel(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// This deadline, expiring at `at` if that is earlier (the flag, if any, still counts).
    pub fn no_later_than(&self, at: Instant) -> Self {
        Deadline {
            at: Some(self.at.map_or(at, |mine| mine.min(at))),
            cancel: self.cancel.clone(),
        }
    }

    /// Whether the instant has passed or the flag is set.
    pub fn expired(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
            || self.at.is_some_and(|at| Instant::now() >= at)
    }

    /// Whether this deadline can ever expire (so loops need not poll one that cannot).
    pub fn is_set(&self) -> bool {
        self.at.is_some() || self.cancel.is_some()
    }
}

/// Polls a [`Deadline`] once every `1 << SHIFT` calls of [`Poll::expired`].
#[derive(Debug)]
pub(crate) struct Poll<'a> {
    deadline: &'a Deadline,
    count: u32,
}

impl<'a> Poll<'a> {
    const MASK: u32 = (1 << 12) - 1;

    pub fn new(deadline: &'a Deadline) -> Self {
        Poll { deadline, count: 0 }
    }

    #[inline]
    pub fn expired(&mut self) -> bool {
        self.count = self.count.wrapping_add(1);
        self.count & Self::MASK == 0 && self.deadline.is_set() && self.deadline.expired()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expires_by_time_or_by_flag() {
        assert!(!Deadline::never().expired());
        assert!(Deadline::at(Instant::now()).expired());
        assert!(!Deadline::after(Duration::from_secs(3600)).expired());
        let flag = Arc::new(AtomicBool::new(false));
        let d = Deadline::never().with_cancel(flag.clone());
        assert!(!d.expired());
        flag.store(true, Ordering::Relaxed);
        assert!(d.expired());
        let soon = Instant::now() + Duration::from_secs(3600);
        let both = Deadline::never().no_later_than(soon);
        assert!(!both.expired());
        assert!(Deadline::after(Duration::from_secs(7200))
            .no_later_than(Instant::now())
            .expired());
        assert!(d.no_later_than(soon).expired(), "the flag still counts");
        let mut poll = Poll::new(&d);
        assert!((0..Poll::MASK + 1).any(|_| poll.expired()));
    }
}
