//! The launcher in a build without the `gpu` feature: there is never a device.

use super::{GpuError, GpuTimings};
use crate::encode::{Codes, EncodedColumns, EncodedProgram};

pub enum Device {}

impl Device {
    pub fn open() -> Result<Device, GpuError> {
        Err(GpuError::NotBuilt)
    }

    pub fn name(&self) -> String {
        match *self {}
    }

    pub fn evaluate(
        &self,
        _: &EncodedColumns,
        _: &EncodedProgram,
    ) -> Result<(Codes, GpuTimings), GpuError> {
        match *self {}
    }
}
