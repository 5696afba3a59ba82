//! Engine selection: `auto` takes the GPU for batches at or above a size threshold when a device is
//! present, else the CPU batch evaluator; `cpu` always the CPU; `gpu` the GPU or a clear error.

use engine::Date;
use engine::Rule;
use engine::batch::evaluate_batch;
use engine::columns::ProfileColumns;
use engine::program::Program;

use crate::encode::{EncodeError, EncodedColumns, EncodedProgram};
use crate::gpu::{Columns, Gpu, GpuError, GpuTimings};
use crate::output::{Output, Outputs};

pub use engine::batch::EngineChoice;

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
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

impl EngineUsed {
    /// `cpu` or `gpu`, for metrics.
    pub fn name(&self) -> &'static str {
        match self {
            EngineUsed::Gpu(_) => "gpu",
            EngineUsed::Cpu | EngineUsed::CpuAfterGpuError(_) => "cpu",
        }
    }
}

/// One program to run over a batch's columns: `program` compiled from `rules` (same order), and
/// what to hand back.
pub struct Job<'a> {
    pub program: &'a Program,
    pub rules: &'a [&'a Rule],
    pub output: Output<'a>,
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
    /// from) on `as_of`, handing back `output`; the CPU path uses `threads` threads.
    pub fn evaluate(
        &self,
        program: &Program,
        rules: &[&Rule],
        columns: &ProfileColumns,
        as_of: Date,
        threads: usize,
        output: Output,
    ) -> Result<(Outputs, EngineUsed), SelectError> {
        let job = Job {
            program,
            rules,
            output,
        };
        let mut done = self.evaluate_each(columns, &[job], as_of, threads)?;
        Ok(done.pop().expect("one result per job"))
    }

    /// Runs each job over the same columns. On the GPU the columns are uploaded once and kept
    /// for every job (a population diff runs the old and the new rules over the same citizens).
    pub fn evaluate_each(
        &self,
        columns: &ProfileColumns,
        jobs: &[Job],
        as_of: Date,
        threads: usize,
    ) -> Result<Vec<(Outputs, EngineUsed)>, SelectError> {
        let pairs: usize = jobs
            .iter()
            .map(|j| columns.len.saturating_mul(j.rules.len()))
            .sum();
        let gpu = match (&self.gpu, self.choice) {
            (Ok(gpu), EngineChoice::Gpu) => Some(gpu),
            (Ok(gpu), EngineChoice::Auto) if pairs >= self.threshold => Some(gpu),
            _ => None,
        };
        let gpu_error = match gpu.map(|gpu| on_gpu(gpu, columns, jobs, as_of)) {
            Some(Ok(done)) => return Ok(done),
            Some(Err(e)) if self.choice == EngineChoice::Gpu => return Err(e),
            // `auto` falls back to the CPU for programs the kernels cannot hold, and on errors.
            Some(Err(SelectError::Gpu(e))) => Some(e.to_string()),
            _ => None,
        };
        Ok(jobs
            .iter()
            .map(|job| {
                let batch = evaluate_batch(job.program, job.rules, columns, as_of, threads);
                let outputs =
                    Outputs::from_codes(job.output, columns.len, job.rules.len(), |c, r| {
                        batch.code(c, r)
                    });
                let used = gpu_error
                    .clone()
                    .map_or(EngineUsed::Cpu, EngineUsed::CpuAfterGpuError);
                (outputs, used)
            })
            .collect())
    }
}

fn on_gpu(
    gpu: &Gpu,
    columns: &ProfileColumns,
    jobs: &[Job],
    as_of: Date,
) -> Result<Vec<(Outputs, EngineUsed)>, SelectError> {
    let programs = jobs
        .iter()
        .map(|job| EncodedProgram::new(job.program, job.rules, columns, as_of))
        .collect::<Result<Vec<_>, _>>()?;
    let encoded = EncodedColumns::new(columns);
    // One job uploads its columns in chunks; several keep them on the device.
    let kept;
    let at = if jobs.len() > 1 {
        kept = gpu.keep(encoded)?;
        Columns::Resident(&kept)
    } else {
        Columns::Host(&encoded)
    };
    jobs.iter()
        .zip(&programs)
        .map(|(job, program)| {
            let (outputs, timings) = gpu.evaluate(at, program, job.output)?;
            Ok((outputs, EngineUsed::Gpu(timings)))
        })
        .collect()
}
