//! The launcher in a build without the `gpu` feature: there is never a device.

use super::{Columns, GpuError, GpuTimings, Resident};
use crate::encode::{EncodedColumns, EncodedProgram};
use crate::launch::Limits;
use crate::output::{Changes, Codes, Output, Outputs};
use crate::patch::Patch;

pub enum Device {}

/// Never made: there is no device to keep columns on.
pub enum DeviceColumns {}

impl Device {
    pub fn open() -> Result<Device, GpuError> {
        Err(GpuError::NotBuilt)
    }

    pub fn name(&self) -> String {
        match *self {}
    }

    pub fn keep(&self, _: &EncodedColumns) -> Result<DeviceColumns, GpuError> {
        match *self {}
    }

    pub fn update(&self, resident: &mut Resident, _: &Patch) -> Result<(), GpuError> {
        match resident.device {}
    }

    pub fn keep_outcomes(&self, resident: &mut Resident, _: &Codes) -> Result<(), GpuError> {
        match resident.device {}
    }

    pub fn update_outcomes(&self, resident: &mut Resident, _: &Changes) -> Result<(), GpuError> {
        match resident.device {}
    }

    pub fn evaluate(
        &self,
        _: Columns,
        _: &EncodedProgram,
        _: Output,
    ) -> Result<(Outputs, GpuTimings), GpuError> {
        match *self {}
    }

    pub fn evaluate_with(
        &self,
        _: Columns,
        _: &EncodedProgram,
        _: Output,
        _: Limits,
    ) -> Result<(Outputs, GpuTimings), GpuError> {
        match *self {}
    }
}
