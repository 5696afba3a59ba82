//! The launcher over cudarc (driver API, NVRTC, libraries loaded at run time).

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};

use super::{GpuError, GpuTimings};
use crate::encode::{Codes, EncodedColumns, EncodedProgram};
use crate::raw::{Place, Placeable, RawColumns, RawProgram};

const SOURCE: &str = include_str!("../../cuda/eligibility.cu");
/// Threads per block: whole warps, so every ballot sees 32 lanes.
const BLOCK: u32 = 256;
/// Blocks along y (conditions or rules), each striding over the rest; x covers the citizens.
const GRID_Y: u32 = 64;

// SAFETY: plain structs of integers, laid out as the kernels' `ElColumns` / `ElProgram`.
unsafe impl cudarc::driver::DeviceRepr for RawColumns {}
unsafe impl cudarc::driver::DeviceRepr for RawProgram {}

fn driver(e: impl std::fmt::Display) -> GpuError {
    GpuError::Driver(e.to_string())
}

pub struct Device {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    conditions: CudaFunction,
    rules: CudaFunction,
}

impl Device {
    pub fn open() -> Result<Device, GpuError> {
        // cudarc panics when a library it calls is missing: look for them first.
        // SAFETY: only tries to load the libraries.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDevice(
                "no CUDA driver library (libcuda) found".into(),
            ));
        }
        let count = CudaContext::device_count().map_err(|e| GpuError::NoDevice(e.to_string()))?;
        if count < 1 {
            return Err(GpuError::NoDevice(
                "the CUDA driver reports no device".into(),
            ));
        }
        // SAFETY: as above.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(GpuError::NoDevice(
                "no NVRTC library (libnvrtc) found".into(),
            ));
        }
        let ctx = CudaContext::new(0).map_err(driver)?;
        let ptx = compile_ptx_with_opts(
            SOURCE,
            CompileOptions {
                name: Some("eligibility.cu".into()),
                ..CompileOptions::default()
            },
        )
        .map_err(|e| GpuError::Compile(format!("{e:?}")))?;
        let module = ctx.load_module(ptx).map_err(driver)?;
        Ok(Device {
            stream: ctx.default_stream(),
            conditions: module.load_function("el_conditions").map_err(driver)?,
            rules: module.load_function("el_rules").map_err(driver)?,
            ctx,
        })
    }

    pub fn name(&self) -> String {
        self.ctx
            .name()
            .unwrap_or_else(|e| format!("CUDA device 0 ({e})"))
    }

    pub fn evaluate(
        &self,
        columns: &EncodedColumns,
        program: &EncodedProgram,
    ) -> Result<(Codes, GpuTimings), GpuError> {
        let mut timings = GpuTimings::default();
        let citizens = columns.len as usize;
        let rules = program.n_rules();

        let start = Instant::now();
        let mut device = Uploads {
            stream: &self.stream,
            kept: Vec::new(),
        };
        let cols = RawColumns::new(columns, &mut device)?;
        let prog = RawProgram::new(program, &mut device)?;
        let mut cond_words = self
            .stream
            .alloc_zeros::<u32>((program.n_conditions() * columns.words as usize).max(1))
            .map_err(driver)?;
        let mut codes = self
            .stream
            .alloc_zeros::<u8>((citizens * rules).max(1))
            .map_err(driver)?;
        self.stream.synchronize().map_err(driver)?;
        timings.upload = start.elapsed();

        if citizens > 0 && rules > 0 {
            let grid_x = u32::try_from(citizens.div_ceil(BLOCK as usize))
                .map_err(|_| driver("too many citizens for one launch"))?;
            let config = |items: usize| LaunchConfig {
                grid_dim: (grid_x, GRID_Y.min(items.max(1) as u32), 1),
                block_dim: (BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
            let start = Instant::now();
            if program.n_conditions() > 0 {
                let mut launch = self.stream.launch_builder(&self.conditions);
                launch.arg(&cols).arg(&prog).arg(&mut cond_words);
                // SAFETY: the arguments match el_conditions; cond_words holds conditions × words.
                unsafe { launch.launch(config(program.n_conditions())) }.map_err(driver)?;
            }
            self.stream.synchronize().map_err(driver)?;
            timings.conditions = start.elapsed();

            let start = Instant::now();
            let mut launch = self.stream.launch_builder(&self.rules);
            launch
                .arg(&cols)
                .arg(&prog)
                .arg(&cond_words)
                .arg(&mut codes);
            // SAFETY: the arguments match el_rules; codes holds rules × citizens bytes.
            unsafe { launch.launch(config(rules)) }.map_err(driver)?;
            self.stream.synchronize().map_err(driver)?;
            timings.rules = start.elapsed();
        }

        let start = Instant::now();
        let mut codes = self.stream.clone_dtoh(&codes).map_err(driver)?;
        codes.truncate(citizens * rules);
        timings.download = start.elapsed();
        drop(device);
        Ok((
            Codes {
                citizens,
                rules,
                codes,
            },
            timings,
        ))
    }
}

/// Copies each encoded array to the device, keeping the copies alive for the launches.
struct Uploads<'a> {
    stream: &'a Arc<CudaStream>,
    kept: Vec<CudaSlice<u8>>,
}

impl Place for Uploads<'_> {
    type Error = GpuError;
    fn place<T: Placeable>(&mut self, values: &[T]) -> Result<u64, GpuError> {
        // SAFETY: Placeable types are plain numbers without padding: their bytes are initialised.
        let bytes = unsafe {
            std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values))
        };
        // An empty array still gets an address (the kernels never read it).
        let slice = if bytes.is_empty() {
            self.stream.alloc_zeros::<u8>(8)
        } else {
            self.stream.clone_htod(bytes)
        }
        .map_err(driver)?;
        let address = slice.device_ptr(self.stream).0;
        self.kept.push(slice);
        Ok(address)
    }
}
