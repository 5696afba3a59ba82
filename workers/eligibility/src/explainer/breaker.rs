//! The LLM circuit breaker: after `failures` consecutive failed calls the circuit opens and
//! calls are refused (the explainer serves templates, fallback `circuit_open`) for `cool_down`;
//! then one call is let through as a probe (half-open): its success closes the circuit, its
//! failure opens it for another cool-down. Calls refused while the probe is in flight are
//! refused as if open.

use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct BreakerSettings {
    /// Consecutive failed calls that open the circuit.
    pub failures: u32,
    /// How long the circuit stays open before a probe.
    pub cool_down: Duration,
}

impl Default for BreakerSettings {
    fn default() -> BreakerSettings {
        BreakerSettings {
            failures: 5,
            cool_down: Duration::from_secs(30),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed {
        failures: u32,
    },
    Open {
        until: Instant,
    },
    /// A probe is in flight.
    HalfOpen,
}

/// What the breaker says about a call about to be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permit {
    /// Make the call (report its outcome with [`Breaker::record`]).
    Call,
    /// Make the call as the half-open probe.
    Probe,
    /// Do not call.
    Refused,
}

pub struct Breaker {
    settings: BreakerSettings,
    state: Mutex<State>,
}

impl Breaker {
    pub fn new(settings: BreakerSettings) -> Breaker {
        Breaker {
            settings,
            state: Mutex::new(State::Closed { failures: 0 }),
        }
    }

    /// Whether a call may be made now.
    pub fn permit(&self) -> Permit {
        let mut state = self.state.lock().expect("not poisoned");
        match *state {
            State::Closed { .. } => Permit::Call,
            State::Open { until } if Instant::now() >= until => {
                *state = State::HalfOpen;
                Permit::Probe
            }
            State::Open { .. } | State::HalfOpen => Permit::Refused,
        }
    }

    /// The outcome of a permitted call.
    pub fn record(&self, permit: Permit, success: bool) {
        let mut state = self.state.lock().expect("not poisoned");
        let open = State::Open {
            until: Instant::now() + self.settings.cool_down,
        };
        let was_open = !matches!(*state, State::Closed { .. });
        *state = match (permit, *state, success) {
            (Permit::Refused, current, _) => current,
            (_, _, true) => State::Closed { failures: 0 },
            (Permit::Probe, _, false) => open,
            (Permit::Call, State::Closed { failures }, false) => {
                let failures = failures + 1;
                if failures >= self.settings.failures.max(1) {
                    open
                } else {
                    State::Closed { failures }
                }
            }
            // A call made before the circuit opened, ending after: the circuit stays as it is.
            (Permit::Call, current, false) => current,
        };
        if matches!(*state, State::Open { .. }) && (!was_open || permit == Permit::Probe) {
            tracing::warn!(
                cool_down_ms = self.settings.cool_down.as_millis() as u64,
                "LLM circuit open"
            );
        }
    }

    /// A permitted call that was not made after all: a probe's turn passes to the next call.
    pub fn forgo(&self, permit: Permit) {
        if permit == Permit::Probe {
            *self.state.lock().expect("not poisoned") = State::Open {
                until: Instant::now(),
            };
        }
    }

    pub fn is_open(&self) -> bool {
        !matches!(
            *self.state.lock().expect("not poisoned"),
            State::Closed { .. }
        )
    }
}
