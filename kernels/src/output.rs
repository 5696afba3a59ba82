//! What an evaluation hands back, and how much of it crosses the bus.
//!
//! A consumer asks for the least it needs (docs: kernels/README.md, "Outputs"):
//! - [`Output::Codes`]: every outcome code (`engine::Outcome::code`), one byte per pair;
//! - [`Output::Verdicts`]: the verdict alone, two bits per pair (a population diff counts
//!   verdicts, not scores);
//! - [`Output::ChangesFrom`]: only the pairs whose code differs from a previous outcome array,
//!   with their new code (a rule-change page: most pairs keep their stored outcome);
//!   [`Output::ChangesFromKept`]: the same with the previous outcomes kept on the device, where
//!   the evaluation leaves the new ones (nothing but the changes crosses the bus).
//!
//! Every layout is in blocks of 32 citizens (one warp), block-major, so a chunk of citizens is a
//! contiguous range of the whole output: the GPU copies each chunk straight to its place.

use std::ops::DerefMut;

use engine::{Outcome, Verdict};

use crate::buffer::HostBuffer;

/// Citizens per block: one warp.
pub const BLOCK: usize = 32;

/// A previous outcome that matches no code: the pair is always reported as changed
/// (`EL_NO_PREVIOUS`).
pub const NO_PREVIOUS: u8 = 254;

/// What to compute. `ChangesFrom` holds the previous codes of the same citizens and rules.
#[derive(Debug, Clone, Copy)]
pub enum Output<'a> {
    Codes,
    Verdicts,
    ChangesFrom(&'a Codes),
    /// As `ChangesFrom`, from the previous codes kept on the device with the columns
    /// (`Gpu::keep_outcomes`, `HostModel::keep_outcomes`); this is the caller's copy of them.
    /// The evaluation writes each changed code over the kept one, so afterwards the device
    /// keeps the new outcomes (and the caller's copy is `Changes::applied_to` it).
    ChangesFromKept(&'a Codes),
}

impl Output<'_> {
    /// `EL_OUT_CODES` … `EL_OUT_CHANGES`.
    pub fn mode(&self) -> u64 {
        match self {
            Output::Codes => 0,
            Output::Verdicts => 1,
            Output::ChangesFrom(_) | Output::ChangesFromKept(_) => 2,
        }
    }
}

/// The result, in the form asked for.
#[derive(Debug)]
pub enum Outputs {
    Codes(Codes),
    Verdicts(Verdicts),
    Changes(Changes),
}

impl Outputs {
    /// The CPU's answer to `output`, from any evaluator's codes.
    pub fn from_codes(
        output: Output,
        citizens: usize,
        rules: usize,
        code: impl Fn(usize, usize) -> u8,
    ) -> Outputs {
        match output {
            Output::Codes => Outputs::Codes(Codes::from_fn(citizens, rules, code)),
            Output::Verdicts => Outputs::Verdicts(Verdicts::from_fn(citizens, rules, |c, r| {
                Outcome::from_code(code(c, r)).verdict
            })),
            Output::ChangesFrom(previous) | Output::ChangesFromKept(previous) => {
                previous.assert_shape(citizens, rules);
                let pairs = (0..citizens)
                    .flat_map(|c| (0..rules).map(move |r| (c, r)))
                    .filter_map(|(c, r)| {
                        let now = code(c, r);
                        (now != previous.code(c, r)).then_some(((c * rules + r) as u64, now))
                    })
                    .collect();
                Outputs::Changes(Changes {
                    citizens,
                    rules,
                    pairs,
                })
            }
        }
    }

    /// The bytes the consumer receives: what the GPU downloads for it.
    pub fn bytes(&self) -> usize {
        match self {
            Outputs::Codes(c) => c.codes.len(),
            Outputs::Verdicts(v) => v.planes.len() * 4,
            Outputs::Changes(c) => c.pairs.len() * 9,
        }
    }
}

/// Index of a pair's block slot: block of 32 citizens, then rule.
fn slot(rules: usize, citizen: usize, rule: usize) -> usize {
    (citizen / BLOCK) * rules + rule
}

/// Outcome codes for every (citizen, rule): `codes[(block * rules + rule) * 32 + lane]`.
#[derive(Debug, Clone)]
pub struct Codes {
    pub citizens: usize,
    pub rules: usize,
    pub codes: HostBuffer<u8>,
}

impl PartialEq for Codes {
    fn eq(&self, other: &Codes) -> bool {
        self.citizens == other.citizens
            && self.rules == other.rules
            && (0..self.citizens)
                .all(|c| (0..self.rules).all(|r| self.code(c, r) == other.code(c, r)))
    }
}

impl Codes {
    /// The length of the array for `citizens` × `rules` (whole blocks).
    pub fn len_for(citizens: usize, rules: usize) -> usize {
        citizens.div_ceil(BLOCK) * BLOCK * rules
    }

    pub fn from_fn(citizens: usize, rules: usize, code: impl Fn(usize, usize) -> u8) -> Codes {
        let mut codes = Codes::filled(citizens, rules, Outcome::NOT_APPLICABLE.code());
        for c in 0..citizens {
            for r in 0..rules {
                codes.set(c, r, code(c, r));
            }
        }
        codes
    }

    /// Every pair with `code` (e.g. [`NO_PREVIOUS`]).
    pub fn filled(citizens: usize, rules: usize, code: u8) -> Codes {
        Codes {
            citizens,
            rules,
            codes: HostBuffer::from(vec![code; Codes::len_for(citizens, rules)]),
        }
    }

    pub fn code(&self, citizen: usize, rule: usize) -> u8 {
        self.codes[Codes::at(self.rules, citizen, rule)]
    }

    pub fn get(&self, citizen: usize, rule: usize) -> Outcome {
        Outcome::from_code(self.code(citizen, rule))
    }

    pub fn set(&mut self, citizen: usize, rule: usize, code: u8) {
        let at = Codes::at(self.rules, citizen, rule);
        self.codes.deref_mut()[at] = code;
    }

    /// Where (citizen, rule)'s code lies in codes of `rules` rules.
    pub fn at(rules: usize, citizen: usize, rule: usize) -> usize {
        slot(rules, citizen, rule) * BLOCK + citizen % BLOCK
    }

    fn assert_shape(&self, citizens: usize, rules: usize) {
        assert_eq!(
            (self.citizens, self.rules),
            (citizens, rules),
            "previous codes are of the same citizens and rules"
        );
    }

    /// The codes of citizens `blocks` (in blocks of 32): a contiguous range.
    pub(crate) fn blocks(&self, first_block: usize, blocks: usize) -> &[u8] {
        let row = self.rules * BLOCK;
        &self.codes[first_block * row..(first_block + blocks) * row]
    }
}

/// The verdict of every (citizen, rule) in two bits, as two planes of 32-citizen words:
/// `planes[(block * rules + rule) * 2 + bit]`, bit 0 the low bit (`EL_V_*`).
#[derive(Debug, Clone)]
pub struct Verdicts {
    pub citizens: usize,
    pub rules: usize,
    pub planes: HostBuffer<u32>,
}

/// The two-bit verdict codes (`EL_V_NOT_ELIGIBLE` … `EL_V_NOT_APPLICABLE`).
const VERDICTS: [Verdict; 4] = [
    Verdict::NotEligible,
    Verdict::PartialMatch,
    Verdict::Eligible,
    Verdict::NotApplicable,
];

impl Verdicts {
    pub fn len_for(citizens: usize, rules: usize) -> usize {
        citizens.div_ceil(BLOCK) * rules * 2
    }

    fn from_fn(citizens: usize, rules: usize, verdict: impl Fn(usize, usize) -> Verdict) -> Self {
        let mut planes = vec![0u32; Verdicts::len_for(citizens, rules)];
        for c in 0..citizens {
            for r in 0..rules {
                let v = VERDICTS
                    .iter()
                    .position(|&x| x == verdict(c, r))
                    .expect("every verdict has a code") as u32;
                let at = slot(rules, c, r) * 2;
                planes[at] |= (v & 1) << (c % BLOCK);
                planes[at + 1] |= (v >> 1) << (c % BLOCK);
            }
        }
        Verdicts {
            citizens,
            rules,
            planes: HostBuffer::from(planes),
        }
    }

    pub fn verdict(&self, citizen: usize, rule: usize) -> Verdict {
        let at = slot(self.rules, citizen, rule) * 2;
        let lane = citizen % BLOCK;
        let low = (self.planes[at] >> lane) & 1;
        let high = (self.planes[at + 1] >> lane) & 1;
        VERDICTS[(low | high << 1) as usize]
    }
}

impl PartialEq for Verdicts {
    fn eq(&self, other: &Verdicts) -> bool {
        self.citizens == other.citizens
            && self.rules == other.rules
            && (0..self.citizens)
                .all(|c| (0..self.rules).all(|r| self.verdict(c, r) == other.verdict(c, r)))
    }
}

/// The pairs whose code differs from the previous one: (citizen × rules + rule, new code),
/// ascending, so the same inputs give the same list whatever order the GPU found them in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    pub citizens: usize,
    pub rules: usize,
    pub pairs: Vec<(u64, u8)>,
}

impl Changes {
    /// (citizen, rule, new outcome), by citizen then rule.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, Outcome)> + '_ {
        self.pairs.iter().map(|&(pair, code)| {
            let pair = pair as usize;
            (
                pair / self.rules,
                pair % self.rules,
                Outcome::from_code(code),
            )
        })
    }

    /// Where each changed code goes in codes of these citizens and rules, and the code: the
    /// writes that bring kept outcomes up to date (`Gpu::update_outcomes`).
    pub fn writes(&self) -> (Vec<u64>, Vec<u8>) {
        self.pairs
            .iter()
            .map(|&(pair, code)| {
                let (c, r) = (pair as usize / self.rules, pair as usize % self.rules);
                (Codes::at(self.rules, c, r) as u64, code)
            })
            .unzip()
    }

    /// `previous` with these changes applied: every pair's new code.
    pub fn applied_to(&self, previous: &Codes) -> Codes {
        previous.assert_shape(self.citizens, self.rules);
        let mut codes = previous.clone();
        for (c, r, outcome) in self.iter() {
            codes.set(c, r, outcome.code());
        }
        codes
    }
}
