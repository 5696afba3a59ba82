//! The CPU batch evaluator: many citizens × many rules over the compiled [`Program`].
//!
//! Citizens are processed in chunks of [`CHUNK_WORDS`] × 64. For a chunk, every deduplicated
//! condition is evaluated once into bit masks (64 citizens a word); then each rule gathers its
//! input bits per citizen and looks the outcome up in its truth table (or runs its postfix program
//! when it has too many inputs to tabulate). Chunks are shared among threads.

use crate::columns::ProfileColumns;
use crate::date::Date;
use crate::outcome::Outcome;
use crate::program::{CompiledRule, Input, Program};
use crate::rule::Rule;
use crate::temporal::applicability;

/// Words (of 64 citizens) per chunk: the chunk's condition masks stay in cache.
pub const CHUNK_WORDS: usize = 16;
const CHUNK: usize = CHUNK_WORDS * 64;

/// Outcome codes (see [`Outcome::code`]) for every (citizen, rule), laid out chunk by chunk:
/// within a chunk, rule-major, so each rule's codes for 64 citizens are contiguous.
pub struct BatchOutcomes {
    pub citizens: usize,
    pub rules: usize,
    codes: Vec<u8>,
}

impl BatchOutcomes {
    /// Room for `citizens` × `rules` codes. Reused through [`evaluate_batch_into`], a buffer
    /// is paged in once rather than once per batch.
    pub fn new(citizens: usize, rules: usize) -> BatchOutcomes {
        BatchOutcomes {
            citizens,
            rules,
            codes: vec![0u8; citizens.div_ceil(CHUNK) * CHUNK * rules],
        }
    }

    pub fn code(&self, citizen: usize, rule: usize) -> u8 {
        let (chunk, offset) = (citizen / CHUNK, citizen % CHUNK);
        self.codes[chunk * CHUNK * self.rules + rule * CHUNK + offset]
    }

    pub fn get(&self, citizen: usize, rule: usize) -> Outcome {
        Outcome::from_code(self.code(citizen, rule))
    }
}

/// Evaluates every citizen against every rule (in `rules` order, which must be the order the
/// program was compiled from) on `as_of`, with `threads` worker threads.
pub fn evaluate_batch(
    program: &Program,
    rules: &[&Rule],
    columns: &ProfileColumns,
    as_of: Date,
    threads: usize,
) -> BatchOutcomes {
    let mut out = BatchOutcomes::new(columns.len, rules.len());
    evaluate_batch_into(program, rules, columns, as_of, threads, &mut out);
    out
}

/// [`evaluate_batch`] into a buffer of the caller's, resized when its shape differs.
pub fn evaluate_batch_into(
    program: &Program,
    rules: &[&Rule],
    columns: &ProfileColumns,
    as_of: Date,
    threads: usize,
    out: &mut BatchOutcomes,
) {
    assert_eq!(
        program.rules.len(),
        rules.len(),
        "the program was compiled from these rules"
    );
    let applicable: Vec<bool> = rules
        .iter()
        .map(|r| applicability(r, as_of).is_applicable())
        .collect();
    let chunks = columns.len.div_ceil(CHUNK);
    let chunk_len = CHUNK * rules.len();
    if (out.citizens, out.rules) != (columns.len, rules.len()) {
        *out = BatchOutcomes::new(columns.len, rules.len());
    }
    if chunk_len == 0 {
        return;
    }
    let threads = threads.clamp(1, chunks.max(1));
    let per_thread = chunks.div_ceil(threads);
    // Thread t evaluates chunks t × per_thread onwards into `part`.
    let run = |t: usize, part: &mut [u8]| {
        let mut scratch = vec![0u64; program.conditions.len() * CHUNK_WORDS];
        for (i, out) in part.chunks_mut(chunk_len).enumerate() {
            let chunk = t * per_thread + i;
            evaluate_chunk(program, &applicable, columns, chunk, &mut scratch, out);
        }
    };
    if threads == 1 {
        // On the calling thread: a thread would cost more than one batch of a few citizens.
        run(0, &mut out.codes);
        return;
    }
    std::thread::scope(|scope| {
        for (t, part) in out.codes.chunks_mut(per_thread * chunk_len).enumerate() {
            let run = &run;
            scope.spawn(move || run(t, part));
        }
    });
}

fn evaluate_chunk(
    program: &Program,
    applicable: &[bool],
    columns: &ProfileColumns,
    chunk: usize,
    scratch: &mut [u64],
    out: &mut [u8],
) {
    let first_word = chunk * CHUNK_WORDS;
    let words = CHUNK_WORDS.min(columns.words - first_word);
    for (c, cond) in program.conditions.iter().enumerate() {
        columns.eval_condition(
            cond,
            first_word,
            &mut scratch[c * CHUNK_WORDS..c * CHUNK_WORDS + words],
        );
    }
    let input_word = |input: Input, w: usize| match input {
        Input::Condition(c) => scratch[c as usize * CHUNK_WORDS + w],
        Input::Known(f) => columns.columns[f as usize].known[first_word + w],
    };
    for (r, rule) in program.rules.iter().enumerate() {
        let out = &mut out[r * CHUNK..(r + 1) * CHUNK];
        if !applicable[r] {
            out.fill(Outcome::NOT_APPLICABLE.code());
            continue;
        }
        let mut inputs = [0u64; crate::program::MAX_TABLE_INPUTS];
        for w in 0..words {
            let codes: &mut [u8; 64] = (&mut out[w * 64..w * 64 + 64])
                .try_into()
                .expect("64 codes a word");
            match &rule.table {
                Some(table) => {
                    for (j, &input) in rule.inputs.iter().enumerate() {
                        inputs[j] = input_word(input, w);
                    }
                    lookup_word(table, &inputs[..rule.inputs.len()], codes);
                }
                None => run_word(rule, &input_word, w, codes),
            }
        }
    }
}

/// Spreads a byte's 8 bits into the low bit of 8 bytes: SPREAD[b] byte i = bit i of b.
const SPREAD: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            if b >> i & 1 == 1 {
                table[b] |= 1 << (8 * i);
            }
            i += 1;
        }
        b += 1;
    }
    table
};

/// Table indices for 64 citizens from their input words, then one look-up each.
#[inline]
fn lookup_word(table: &[u8], inputs: &[u64], codes: &mut [u8; 64]) {
    if inputs.len() <= 8 {
        // Eight citizens' indices side by side in one u64, a byte each.
        for group in 0..8 {
            let mut lanes = 0u64;
            for (j, word) in inputs.iter().enumerate() {
                lanes |= SPREAD[(word >> (8 * group) & 0xff) as usize] << j;
            }
            for (i, code) in codes[group * 8..group * 8 + 8].iter_mut().enumerate() {
                *code = table[(lanes >> (8 * i) & 0xff) as usize];
            }
        }
    } else {
        for (u, code) in codes.iter_mut().enumerate() {
            let index = inputs.iter().enumerate().fold(0usize, |acc, (j, word)| {
                acc | ((word >> u & 1) as usize) << j
            });
            *code = table[index];
        }
    }
}

/// The postfix program per citizen, for rules with too many inputs to tabulate.
fn run_word(
    rule: &CompiledRule,
    input_word: &impl Fn(Input, usize) -> u64,
    w: usize,
    codes: &mut [u8; 64],
) {
    for (u, code) in codes.iter_mut().enumerate() {
        let bit = |input: Input| input_word(input, w) >> u & 1 == 1;
        *code = rule
            .run(|c| bit(Input::Condition(c)), |f| bit(Input::Known(f)))
            .code();
    }
}

/// Which evaluator runs batches (`ELIGIBILITY_ENGINE`): this crate's CPU batch evaluator, the
/// GPU kernels (the `kernels` crate), or the GPU where one is found and the batch is large
/// enough. A plain value here, so that configuration names it without depending on the kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    Auto,
    Cpu,
    Gpu,
}

impl std::str::FromStr for EngineChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<EngineChoice, String> {
        [EngineChoice::Auto, EngineChoice::Cpu, EngineChoice::Gpu]
            .into_iter()
            .find(|choice| choice.to_string() == s)
            .ok_or_else(|| format!("unknown engine {s:?}: expected auto, cpu or gpu"))
    }
}

impl std::fmt::Display for EngineChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EngineChoice::Auto => "auto",
            EngineChoice::Cpu => "cpu",
            EngineChoice::Gpu => "gpu",
        })
    }
}
