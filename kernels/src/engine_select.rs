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
        match s {
            "auto" => Ok(EngineChoice::Auto),
            "cpu" => Ok(EngineChoice::Cpu),
            "gpu" => Ok(EngineChoice::Gpu),
            other => Err(SelectError::UnknownEngine(other.to_string())),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("unknown engine {0:?}: expected auto, cpu or gpu")]
    UnknownEngine(String),
    #[error("engine gpu was asked for: {0}")]
    Gpu(#[from] GpuError),
    #[error("engine gpu was asked for, but the program does not fit the kernels: {0}")]
    Encode(#[from] EncodeError),
}

/// Which engine evaluated a batch.
#[derive(Debug, Clone, Copy)]
pub enum EngineUsed {
    Cpu,
    Gpu(GpuTimings),
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
                (Ok(encoded), _) => {
                    let (codes, timings) = gpu.evaluate(&EncodedColumns::new(columns), &encoded)?;
                    return Ok((Evaluated::Gpu(codes), EngineUsed::Gpu(timings)));
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
