//! The GPU launcher: finds a CUDA device without ever panicking, compiles `cuda/eligibility.cu`
//! with NVRTC once, keeps columns on the device when asked (updating only changed citizens),
//! runs the kernels in chunks on two streams so one chunk's copies overlap another's kernels,
//! and copies back only the output asked for into reused page-locked buffers.
//!
//! Behind the cargo feature `gpu`; without it the same API reports that the build has no GPU
//! support.

use std::time::Duration;

use crate::chunk::Residence;
use crate::encode::{EncodedColumns, EncodedProgram};
use crate::launch::Limits;
use crate::output::{Changes, Codes, Output, Outputs};
use crate::patch::Patch;

#[cfg(not(feature = "gpu"))]
#[path = "gpu/absent.rs"]
mod imp;
#[cfg(feature = "gpu")]
#[path = "gpu/cuda.rs"]
mod imp;

#[cfg(feature = "gpu")]
pub use imp::Pinned;

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
    #[error("the columns changed layout (length or list width): keep them anew")]
    Relayout,
}

/// Where the time went. Each phase is the sum over chunks of the device's own timing (CUDA
/// events); with two streams the phases overlap, so `wall` (host clock, first copy to last) is
/// less than their sum.
#[derive(Debug, Clone, Copy, Default)]
pub struct GpuTimings {
    /// Host → device: the program, and the columns unless they are kept on the device.
    pub upload: Duration,
    /// The condition kernel.
    pub conditions: Duration,
    /// The rule kernel (with its output stage).
    pub rules: Duration,
    /// Device → host: the output asked for.
    pub download: Duration,
    pub wall: Duration,
    pub chunks: usize,
    /// Bytes copied each way.
    pub bytes_up: usize,
    pub bytes_down: usize,
}

impl GpuTimings {
    pub fn kernels(&self) -> Duration {
        self.conditions + self.rules
    }

    pub fn transfers(&self) -> Duration {
        self.upload + self.download
    }
}

/// Columns kept on the device for many evaluations (several programs, dates or outputs) with a
/// host copy of what they hold.
pub struct Resident {
    host: EncodedColumns,
    device: imp::DeviceColumns,
}

impl Resident {
    /// What the device holds.
    pub fn columns(&self) -> &EncodedColumns {
        &self.host
    }
}

/// The columns of an evaluation: uploaded for it, or kept on the device.
#[derive(Clone, Copy)]
pub enum Columns<'a> {
    Host(&'a EncodedColumns),
    Resident(&'a Resident),
}

impl Columns<'_> {
    pub fn encoded(&self) -> &EncodedColumns {
        match self {
            Columns::Host(c) => c,
            Columns::Resident(r) => &r.host,
        }
    }

    pub fn residence(&self) -> Residence {
        match self {
            Columns::Host(_) => Residence::Upload,
            Columns::Resident(_) => Residence::Kept,
        }
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

    /// Uploads `columns` once, for evaluations with [`Columns::Resident`].
    pub fn keep(&self, columns: EncodedColumns) -> Result<Resident, GpuError> {
        let device = self.0.keep(&columns)?;
        Ok(Resident {
            host: columns,
            device,
        })
    }

    /// Brings kept columns up to date with `patch` (`EncodedColumns::patch`): only the changed
    /// citizens' values are uploaded.
    pub fn update(&self, resident: &mut Resident, patch: &Patch) -> Result<(), GpuError> {
        self.0.update(resident, patch)?;
        resident.host.apply(patch);
        Ok(())
    }

    /// Keeps `codes` (of these columns' citizens) on the device with the columns, for
    /// `Output::ChangesFromKept`: a rule-change page then uploads nothing but the program, and
    /// each evaluation leaves its new codes there.
    pub fn keep_outcomes(&self, resident: &mut Resident, codes: &Codes) -> Result<(), GpuError> {
        assert_eq!(
            codes.citizens as u64, resident.host.len,
            "outcomes of the kept citizens"
        );
        self.0.keep_outcomes(resident, codes)
    }

    /// Brings the kept outcomes up to date where they changed outside a rule change (a citizen
    /// re-evaluated after a profile update): only those codes are uploaded, as `update` does
    /// for the columns.
    pub fn update_outcomes(
        &self,
        resident: &mut Resident,
        changes: &Changes,
    ) -> Result<(), GpuError> {
        assert_eq!(
            changes.citizens as u64, resident.host.len,
            "outcomes of the kept citizens"
        );
        self.0.update_outcomes(resident, changes)
    }

    /// Evaluates every citizen of `columns` against `program`, handing back `output`.
    pub fn evaluate(
        &self,
        columns: Columns,
        program: &EncodedProgram,
        output: Output,
    ) -> Result<(Outputs, GpuTimings), GpuError> {
        self.0.evaluate(columns, program, output)
    }

    /// As [`Gpu::evaluate`], cut as `limits` says rather than by free device memory.
    pub fn evaluate_with(
        &self,
        columns: Columns,
        program: &EncodedProgram,
        output: Output,
        limits: Limits,
    ) -> Result<(Outputs, GpuTimings), GpuError> {
        self.0.evaluate_with(columns, program, output, limits)
    }
}
