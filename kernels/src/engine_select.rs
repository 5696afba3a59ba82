//! Engine selection: `auto` takes the GPU for batches at or above a size threshold when a device is
//! present, else the CPU batch evaluator; `cpu` always the CPU; `gpu` the GPU or a clear error.

use std::str::FromStr;

use engine::Date;
use engine::Rule;
use engine::batch::{BatchOutcomes, evaluate_batch};
use engine::columns::ProfileColumns;
use engine::program::Program;

use crate::encode::{Codes, EncodeError, EncodedColumns, EncodedProgram};
use crate::gpu::{Gpu, GpuError, GpuTimings};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    Auto,
    Cpu,
    Gpu,
}

impl FromStr for EngineChoice {
    type Err = SelectError;

    fn from_str(s: &str) -> Result<EngineChoice, SelectError> {
        [EngineChoice::Auto, EngineChoice::Cpu, EngineChoice::Gpu]
            .into_iter()
            .find(|choice| choice.to_string() == s)
            .ok_or_else(|| SelectError::UnknownEngine(s.to_string()))
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

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("unknown engine {0:?}: expected auto, cpu or gpu")]
    UnknownEngine(String),
    // The causes print as the error's source (anyhow's `{:#}` shows the chain).
    #[error("engine gpu was asked for")]
    Gpu(#[from] GpuError),
    #[error("engine gpu was asked for, but the program does not fit the kernels")]
    Encode(#[from] EncodeError),
}

/// Which engine evaluated a batch.
#[derive(Debug, Clone)]
pub enum EngineUsed {
    Cpu,
    Gpu(GpuTimings),
    /// `auto` met this GPU error and evaluated the batch on the CPU instead.
    CpuAfterGpuError(String),
}

/// A batch's outcome codes, in the layout of the engine that computed them.
pub enum Evaluated {
    Cpu(BatchOutcomes),
    Gpu(Codes),
}

impl Evaluated {
    /// The outcome code (`engine::Outcome::code`) of `rule` for `citizen`.
    pub fn code(&self, citizen: usize, rule: usize) -> u8 {
        match self {
            Evaluated::Cpu(b) => b.code(citizen, rule),
            Evaluated::Gpu(c) => c.code(citizen, rule),
        }
    }
}

/// An engine choice with its device, detected once (NVRTC compiles the kernels on detection).
pub struct Engine {
    choice: EngineChoice,
    /// citizens × rules from which `auto` prefers the GPU.
    threshold: usize,
    gpu: Result<Gpu, GpuError>,
}

impl Engine {
    /// `gpu` without a usable device is an error here; `auto` remembers why it will use the CPU.
    pub fn new(choice: EngineChoice, threshold: usize) -> Result<Engine, SelectError> {
        let gpu = match choice {
            EngineChoice::Cpu => Err(GpuError::NoDevice("engine cpu was chosen".into())),
            EngineChoice::Auto => Gpu::detect(),
            EngineChoice::Gpu => Ok(Gpu::detect()?),
        };
        Ok(Engine {
            choice,
            threshold,
            gpu,
        })
    }

    /// The device in use, or why there is none.
    pub fn gpu(&self) -> Result<&Gpu, &GpuError> {
        self.gpu.as_ref()
    }

    /// Evaluates every citizen against every rule (`rules` in the order `program` was compiled
    /// from) on `as_of`; the CPU path uses `threads` threads.
    pub fn evaluate(
        &self,
        program: &Program,
        rules: &[&Rule],
        columns: &ProfileColumns,
        as_of: Date,
        threads: usize,
    ) -> Result<(Evaluated, EngineUsed), SelectError> {
        let big = columns.len.saturating_mul(rules.len()) >= self.threshold;
        let gpu = match (&self.gpu, self.choice) {
            (Ok(gpu), EngineChoice::Gpu) => Some(gpu),
            (Ok(gpu), EngineChoice::Auto) if big => Some(gpu),
            _ => None,
        };
        if let Some(gpu) = gpu {
            let encoded = EncodedProgram::new(program, rules, columns, as_of);
            match (encoded, self.choice) {
                (Ok(encoded), choice) => {
                    match gpu.evaluate(&EncodedColumns::new(columns), &encoded) {
                        Ok((codes, timings)) => {
                            return Ok((Evaluated::Gpu(codes), EngineUsed::Gpu(timings)));
                        }
                        Err(e) if choice == EngineChoice::Gpu => return Err(e.into()),
                        Err(e) => {
                            let batch = evaluate_batch(program, rules, columns, as_of, threads);
                            let used = EngineUsed::CpuAfterGpuError(e.to_string());
                            return Ok((Evaluated::Cpu(batch), used));
                        }
                    }
                }
                (Err(e), EngineChoice::Gpu) => return Err(e.into()),
                // `auto` falls back to the CPU for programs the kernels cannot hold.
                (Err(_), _) => {}
            }
        }
        let batch = evaluate_batch(program, rules, columns, as_of, threads);
        Ok((Evaluated::Cpu(batch), EngineUsed::Cpu))
    }
}
