//! The GPU launcher: finds a CUDA device without ever panicking, compiles `cuda/eligibility.cu`
//! with NVRTC at run time, uploads the encoded columns and program, runs the two kernels and
//! downloads the codes, timing transfers and kernels apart.
//!
//! Behind the cargo feature `gpu`; without it the same API reports that the build has no GPU
//! support.

use std::time::Duration;

use crate::encode::{Codes, EncodedColumns, EncodedProgram};

#[cfg(not(feature = "gpu"))]
#[path = "gpu/absent.rs"]
mod imp;
#[cfg(feature = "gpu")]
#[path = "gpu/cuda.rs"]
mod imp;

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("built without the gpu feature (rebuild with `--features gpu`)")]
    NotBuilt,
    #[error("no GPU: {0}")]
    NoDevice(String),
    #[error("compiling the kernels with NVRTC failed: {0}")]
    Compile(String),
    #[error("CUDA driver error: {0}")]
    Driver(String),
}

/// Where the time went, each phase ended by a synchronisation.
#[derive(Debug, Clone, Copy, Default)]
pub struct GpuTimings {
    /// Host → device: columns and program.
    pub upload: Duration,
    /// The condition kernel.
    pub conditions: Duration,
    /// The rule kernel.
    pub rules: Duration,
    /// Device → host: the codes.
    pub download: Duration,
}

impl GpuTimings {
    pub fn kernels(&self) -> Duration {
        self.conditions + self.rules
    }

    pub fn transfers(&self) -> Duration {
        self.upload + self.download
    }
}

/// A CUDA device with the kernels loaded.
pub struct Gpu(imp::Device);

impl Gpu {
    /// The first CUDA device, or why there is none. Never panics, with or without a driver.
    pub fn detect() -> Result<Gpu, GpuError> {
        imp::Device::open().map(Gpu)
    }

    /// The device's name, for reports.
    pub fn name(&self) -> String {
        self.0.name()
    }

    /// Codes for every (citizen, rule), rule-major.
    pub fn evaluate(
        &self,
        columns: &EncodedColumns,
        program: &EncodedProgram,
    ) -> Result<(Codes, GpuTimings), GpuError> {
        self.0.evaluate(columns, program)
    }
}
