//! The launcher over cudarc (driver API, NVRTC, libraries loaded at run time).
//!
//! What it keeps between evaluations, so a steady state allocates nothing: device buffers that
//! only grow (the program's arrays, and per stream a chunk's columns, condition words, output and
//! changes), and page-locked host buffers that outputs borrow and give back when dropped. Chunks
//! alternate between two streams: a chunk's upload and download overlap the other's kernels.
//! Kernel arguments are raw device addresses (the `El*` structs), so ordering is by stream:
//! a stream's buffers are only touched by that stream's work, and what both read (the program,
//! resident columns) is complete before either starts.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    LaunchConfig, PinnedHostSlice, PushKernelArg, result,
};
use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};

use super::{Columns, GpuError, GpuTimings, Resident};
use crate::buffer::HostBuffer;
use crate::chunk::{THREADS, device_bytes};
use crate::encode::{EncodedColumns, EncodedProgram};
use crate::launch::{self, Backend, Chunk, ChunkColumns, Found, Limits};
use crate::output::{BLOCK, Changes, Codes, Output, Outputs};
use crate::patch::Patch;
use crate::raw::{Place, Placeable, RawColumns, RawOutput, RawProgram};

const SOURCE: &str = include_str!("../../cuda/eligibility.cu");
/// The share of free device memory a chunk on each of the two streams may take.
const MEMORY_SHARE: f64 = 0.35;
/// Room for changes reserved per chunk before compaction runs again with room for all (9 bytes
/// each on the device).
const CHANGE_CAPACITY: usize = 1 << 24;
/// Threads of el_scan's one block (`EL_SCAN_THREADS`).
const SCAN_THREADS: u32 = 1024;

// SAFETY: plain structs of integers, laid out as the kernels' `ElColumns` / `ElProgram` /
// `ElOutput`.
unsafe impl DeviceRepr for RawColumns {}
unsafe impl DeviceRepr for RawProgram {}
unsafe impl DeviceRepr for RawOutput {}

fn driver(e: impl std::fmt::Display) -> GpuError {
    GpuError::Driver(e.to_string())
}

/// A device buffer that only grows.
#[derive(Default)]
struct Grow(Option<CudaSlice<u8>>);

impl Grow {
    /// The address of at least `bytes` bytes (never zero bytes: the kernels may take the address).
    fn at_least(&mut self, stream: &Arc<CudaStream>, bytes: usize) -> Result<u64, GpuError> {
        let bytes = bytes.max(8);
        if self.0.as_ref().is_none_or(|b| b.len() < bytes) {
            self.0 = None;
            // SAFETY: device memory, written before it is read (uploads, kernels, memsets).
            self.0 = Some(unsafe { stream.alloc::<u8>(bytes) }.map_err(driver)?);
        }
        let buffer = self.0.as_ref().expect("allocated above");
        Ok(buffer.device_ptr(stream).0)
    }
}

/// Device copies of encoded arrays, one growing buffer per array in the order they are placed.
#[derive(Default)]
struct Arrays {
    slots: Vec<Grow>,
    next: usize,
    bytes: usize,
}

/// Places arrays into [`Arrays`] on one stream.
struct Upload<'a> {
    arrays: &'a mut Arrays,
    stream: &'a Arc<CudaStream>,
    /// Page-locked memory to copy the values into first (its address, bytes and bytes used),
    /// so the copy to the device runs while the host goes on; else the driver stages them.
    staging: Option<(*mut u8, usize, usize)>,
}

/// Where the next array starts in staging memory: 8-byte aligned.
fn aligned(at: usize) -> usize {
    at.next_multiple_of(8)
}

impl Place for Upload<'_> {
    type Error = GpuError;
    fn place<T: Placeable>(&mut self, values: &[T]) -> Result<u64, GpuError> {
        let slot = self.arrays.next;
        self.arrays.next += 1;
        if self.arrays.slots.len() <= slot {
            self.arrays.slots.push(Grow::default());
        }
        let bytes = size_of_val(values);
        let address = self.arrays.slots[slot].at_least(self.stream, bytes)?;
        if !values.is_empty() {
            match &mut self.staging {
                Some((base, room, used)) => {
                    let at = aligned(*used);
                    assert!(at + bytes <= *room, "staging sized by staged_bytes");
                    // SAFETY: `base` is page-locked memory of `room` bytes that only this
                    // lane's copies read, and the lane's previous chunk was collected before
                    // this one started; `at` is 8-byte aligned, so the values are aligned too.
                    let staged = unsafe {
                        let to = base.add(at).cast::<T>();
                        std::ptr::copy_nonoverlapping(values.as_ptr(), to, values.len());
                        std::slice::from_raw_parts(to.cast_const(), values.len())
                    };
                    // SAFETY: the slot holds at least these bytes; the staged copy stays
                    // untouched until the lane is collected.
                    unsafe { result::memcpy_htod_async(address, staged, self.stream.cu_stream()) }
                        .map_err(driver)?;
                    *used = at + bytes;
                }
                None => {
                    // SAFETY: the slot holds at least the values' bytes; a copy from pageable
                    // memory is staged by the driver before this returns, so `values` may go
                    // away after it.
                    unsafe { result::memcpy_htod_async(address, values, self.stream.cu_stream()) }
                        .map_err(driver)?;
                }
            }
        }
        self.arrays.bytes += bytes;
        Ok(address)
    }
}

impl Arrays {
    fn upload<'a>(&'a mut self, stream: &'a Arc<CudaStream>) -> Upload<'a> {
        self.next = 0;
        self.bytes = 0;
        Upload {
            arrays: self,
            stream,
            staging: None,
        }
    }

    /// As [`Arrays::upload`], through page-locked `staging` of `room` bytes.
    fn upload_staged<'a>(
        &'a mut self,
        stream: &'a Arc<CudaStream>,
        staging: *mut u8,
        room: usize,
    ) -> Upload<'a> {
        let mut up = self.upload(stream);
        up.staging = Some((staging, room, 0));
        up
    }
}

/// The staging bytes `RawColumns::new` places for `c` (each array 8-byte aligned).
fn staged_bytes(c: &EncodedColumns) -> usize {
    [
        size_of_val(&c.col_kind[..]),
        size_of_val(&c.col_known[..]),
        size_of_val(&c.col_data[..]),
        size_of_val(&c.col_width[..]),
        size_of_val(&c.ints[..]),
        size_of_val(&c.nums[..]),
        size_of_val(&c.u32s[..]),
    ]
    .iter()
    .map(|&b| aligned(b))
    .sum()
}

/// Page-locked host memory a lane stages its chunks' columns in; it only grows.
#[derive(Default)]
struct Staging(Option<PinnedHostSlice<u8>>);

impl Staging {
    fn at_least(&mut self, ctx: &Arc<CudaContext>, bytes: usize) -> Result<*mut u8, GpuError> {
        if self.0.as_ref().is_none_or(|b| b.len() < bytes) {
            self.0 = None;
            // SAFETY: page-locked memory the host writes and the device reads; every byte a
            // copy reads is written first.
            self.0 = Some(
                unsafe { ctx.alloc_pinned_with_flags::<u8>(bytes.max(8), 0) }.map_err(driver)?,
            );
        }
        self.0
            .as_mut()
            .expect("allocated above")
            .as_mut_ptr()
            .map_err(driver)
    }
}

/// Columns kept on the device, with the addresses the kernels read, and the outcomes kept with
/// them (`Output::ChangesFromKept`; evaluations from them write the new codes there).
pub struct DeviceColumns {
    /// Held, never read: the device memory `raw` points into.
    _memory: Arrays,
    raw: RawColumns,
    outcomes: Grow,
    outcome_bytes: usize,
}

/// What one stream keeps for its chunks.
#[derive(Default)]
struct Lane {
    columns: Arrays,
    staging: Staging,
    cond_words: Grow,
    codes: Grow,
    planes: Grow,
    previous: Grow,
    masks: Grow,
    counts: Grow,
    n_changes: Grow,
    change_pair: Grow,
    change_code: Grow,
    /// The chunk in flight on this stream.
    pending: Option<Pending>,
}

/// A chunk in flight: its events (start, uploaded, conditions, rules, downloaded), and for
/// changes the output it compacts them into and its number of citizens.
struct Pending {
    chunk: usize,
    events: [CudaEvent; 5],
    changes: Option<(RawOutput, u64, u64)>,
}

#[derive(Default)]
struct Scratch {
    program: Arrays,
    lanes: [Lane; 2],
}

/// Page-locked host buffers that outputs give back.
type Pool = Arc<Mutex<Vec<PinnedHostSlice<u8>>>>;

/// An output's page-locked host memory, from the device's pool and back to it when dropped.
pub struct Pinned<T> {
    slice: Option<PinnedHostSlice<u8>>,
    ptr: *mut T,
    len: usize,
    pool: Pool,
}

// SAFETY: the buffer is owned by this value alone (the pool holds it only once it is dropped).
unsafe impl<T: Send> Send for Pinned<T> {}
unsafe impl<T: Sync> Sync for Pinned<T> {}

impl<T> Deref for Pinned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` is the page-locked allocation of at least `len` values this value owns;
        // every copy into it completed before the output was handed out.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> DerefMut for Pinned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, and `&mut self` is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T> Drop for Pinned<T> {
    fn drop(&mut self) {
        if let (Some(slice), Ok(mut pool)) = (self.slice.take(), self.pool.lock()) {
            pool.push(slice);
        }
    }
}

pub struct Device {
    ctx: Arc<CudaContext>,
    streams: [Arc<CudaStream>; 2],
    conditions: CudaFunction,
    rules: CudaFunction,
    scan: CudaFunction,
    compact: CudaFunction,
    scatter: CudaFunction,
    pool: Pool,
    /// One evaluation at a time owns the reusable device buffers.
    scratch: Mutex<Scratch>,
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
            streams: [
                ctx.new_stream().map_err(driver)?,
                ctx.new_stream().map_err(driver)?,
            ],
            conditions: module.load_function("el_conditions").map_err(driver)?,
            rules: module.load_function("el_rules").map_err(driver)?,
            scan: module.load_function("el_scan").map_err(driver)?,
            compact: module.load_function("el_compact").map_err(driver)?,
            scatter: module.load_function("el_scatter").map_err(driver)?,
            pool: Pool::default(),
            scratch: Mutex::default(),
            ctx,
        })
    }

    pub fn name(&self) -> String {
        self.ctx
            .name()
            .unwrap_or_else(|e| format!("CUDA device 0 ({e})"))
    }

    fn scratch(&self) -> Result<MutexGuard<'_, Scratch>, GpuError> {
        self.scratch
            .lock()
            .map_err(|_| driver("an earlier evaluation panicked"))
    }

    pub fn keep(&self, columns: &EncodedColumns) -> Result<DeviceColumns, GpuError> {
        let stream = &self.streams[0];
        let mut arrays = Arrays::default();
        let raw = RawColumns::new(columns, &mut arrays.upload(stream))?;
        stream.synchronize().map_err(driver)?;
        Ok(DeviceColumns {
            _memory: arrays,
            raw,
            outcomes: Grow::default(),
            outcome_bytes: 0,
        })
    }

    pub fn keep_outcomes(&self, resident: &mut Resident, codes: &Codes) -> Result<(), GpuError> {
        let stream = &self.streams[0];
        let device = &mut resident.device;
        let at = device.outcomes.at_least(stream, codes.codes.len())?;
        // SAFETY: the buffer holds at least the codes' bytes; the copy completes before the
        // synchronisation below.
        unsafe { result::memcpy_htod_async(at, &codes.codes[..], stream.cu_stream()) }
            .map_err(driver)?;
        stream.synchronize().map_err(driver)?;
        device.outcome_bytes = codes.codes.len();
        Ok(())
    }

    pub fn update(&self, resident: &mut Resident, patch: &Patch) -> Result<(), GpuError> {
        self.scatter(resident, patch, &[], &[])
    }

    pub fn update_outcomes(
        &self,
        resident: &mut Resident,
        changes: &Changes,
    ) -> Result<(), GpuError> {
        let (at, codes) = changes.writes();
        // Pairs come by citizen then rule; their places in the block-major codes do not
        // ascend, so the bound is checked against the largest.
        if at
            .iter()
            .max()
            .is_some_and(|&most| most as usize >= resident.device.outcome_bytes)
        {
            return Err(driver(
                "outcome writes beyond the kept outcomes: keep_outcomes first",
            ));
        }
        self.scatter(resident, &Patch::default(), &at, &codes)
    }

    /// el_scatter: `patch` into the kept columns, `codes` at `code_at` into the kept outcomes.
    fn scatter(
        &self,
        resident: &mut Resident,
        patch: &Patch,
        code_at: &[u64],
        codes: &[u8],
    ) -> Result<(), GpuError> {
        if patch.is_empty() && code_at.is_empty() {
            return Ok(());
        }
        let stream = &self.streams[0];
        let mut arrays = Arrays::default();
        let mut up = arrays.upload(stream);
        let u32_at = up.place(&patch.u32_at)?;
        let u32_values = up.place(&patch.u32_values)?;
        let int_at = up.place(&patch.int_at)?;
        let int_values = up.place(&patch.int_values)?;
        let num_at = up.place(&patch.num_at)?;
        let num_values = up.place(&patch.num_values)?;
        let u8_at = up.place(code_at)?;
        let u8_values = up.place(codes)?;
        let device = &mut resident.device;
        let raw = &device.raw;
        let outcomes = match device.outcomes.0.as_ref() {
            Some(kept) => kept.device_ptr(stream).0,
            None => 0,
        };
        let counts = [
            patch.u32_at.len() as u64,
            patch.int_at.len() as u64,
            patch.num_at.len() as u64,
            code_at.len() as u64,
        ];
        let most = counts.iter().copied().max().unwrap_or(0);
        let mut launch = stream.launch_builder(&self.scatter);
        launch
            .arg(&raw.u32s)
            .arg(&u32_at)
            .arg(&u32_values)
            .arg(&counts[0])
            .arg(&raw.ints)
            .arg(&int_at)
            .arg(&int_values)
            .arg(&counts[1])
            .arg(&raw.nums)
            .arg(&num_at)
            .arg(&num_values)
            .arg(&counts[2])
            .arg(&outcomes)
            .arg(&u8_at)
            .arg(&u8_values)
            .arg(&counts[3]);
        let blocks = most.div_ceil(u64::from(THREADS)).clamp(1, 65_535) as u32;
        let config = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match el_scatter; every offset is within the resident pools
        // (`EncodedColumns::patch` computes them from the same layout) or the kept outcomes
        // (checked above).
        unsafe { launch.launch(config) }.map_err(driver)?;
        stream.synchronize().map_err(driver)?;
        Ok(())
    }

    /// el_compact over a chunk of `len` citizens: its changed pairs below `out.capacity`.
    fn compact(
        &self,
        stream: &Arc<CudaStream>,
        out: &RawOutput,
        len: u64,
        rules: u64,
    ) -> Result<(), GpuError> {
        let mut launch = stream.launch_builder(&self.compact);
        launch.arg(out).arg(&len).arg(&rules);
        let blocks = u32::try_from(len.div_ceil(u64::from(THREADS)))
            .map_err(|_| driver("too many citizens for one launch"))?;
        let config = LaunchConfig {
            grid_dim: (blocks.max(1), 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match el_compact; masks, counts and previous codes hold the
        // chunk's, the change buffers `out.capacity` entries.
        unsafe { launch.launch(config) }.map_err(driver)?;
        Ok(())
    }

    /// Chunks sized so that one chunk on each stream fits in a share of free device memory
    /// (kept columns are already there: only the chunk's buffers count).
    fn limits(&self, columns: &Columns, program: &EncodedProgram, output: &Output) -> Limits {
        let encoded = columns.encoded();
        let citizens = encoded.len as usize;
        let free = self.ctx.mem_get_info().map_or(0, |(free, _)| free);
        let probe = (BLOCK * 1024).min(citizens.max(BLOCK));
        let per_citizen =
            device_bytes(encoded, program, output, probe, 0, columns.residence()).div_ceil(probe);
        let budget = (free as f64 * MEMORY_SHARE) as usize;
        Limits {
            chunk_citizens: (budget / per_citizen.max(1)).max(BLOCK),
            change_capacity: CHANGE_CAPACITY,
        }
    }

    pub fn evaluate(
        &self,
        columns: Columns,
        program: &EncodedProgram,
        output: Output,
    ) -> Result<(Outputs, GpuTimings), GpuError> {
        let limits = self.limits(&columns, program, &output);
        self.evaluate_with(columns, program, output, limits)
    }

    pub fn evaluate_with(
        &self,
        columns: Columns,
        program: &EncodedProgram,
        output: Output,
        limits: Limits,
    ) -> Result<(Outputs, GpuTimings), GpuError> {
        let started = Instant::now();
        let mut run = Run {
            device: self,
            scratch: self.scratch()?,
            resident: match columns {
                Columns::Resident(r) => Some(r.device.raw),
                Columns::Host(_) => None,
            },
            outcomes: match columns {
                Columns::Resident(r) if r.device.outcome_bytes > 0 => r
                    .device
                    .outcomes
                    .0
                    .as_ref()
                    .map(|b| (b.device_ptr(&self.streams[0]).0, r.device.outcome_bytes)),
                _ => None,
            },
            program: None,
            started: 0,
            found: Vec::new(),
            timings: GpuTimings::default(),
        };
        let outputs = launch::evaluate(
            &mut run,
            columns.encoded(),
            columns.residence(),
            program,
            output,
            limits,
        )?;
        run.timings.wall = started.elapsed();
        Ok((outputs, run.timings))
    }
}

/// One evaluation on the device.
struct Run<'a> {
    device: &'a Device,
    scratch: MutexGuard<'a, Scratch>,
    resident: Option<RawColumns>,
    /// The outcomes kept with the resident columns: address and bytes.
    outcomes: Option<(u64, usize)>,
    program: Option<RawProgram>,
    /// Chunks started so far.
    started: usize,
    found: Vec<Option<Found>>,
    timings: GpuTimings,
}

fn ms(d: f32) -> Duration {
    Duration::from_secs_f64(f64::from(d.max(0.0)) / 1e3)
}

impl Run<'_> {
    /// Waits for the chunk in flight on `lane`, adds its timings, and takes its changes.
    fn collect(&mut self, lane: usize) -> Result<(), GpuError> {
        let stream = self.device.streams[lane].clone();
        let Some(pending) = self.scratch.lanes[lane].pending.take() else {
            return Ok(());
        };
        stream.synchronize().map_err(driver)?;
        let [start, uploaded, conditions, rules, downloaded] = &pending.events;
        let t = &mut self.timings;
        t.upload += ms(start.elapsed_ms(uploaded).map_err(driver)?);
        t.conditions += ms(uploaded.elapsed_ms(conditions).map_err(driver)?);
        t.rules += ms(conditions.elapsed_ms(rules).map_err(driver)?);
        t.download += ms(rules.elapsed_ms(downloaded).map_err(driver)?);
        let mut found = Found::default();
        if let Some((mut out, len, rules)) = pending.changes {
            let mut total = [0u64];
            // SAFETY: the counter is one u64 on this stream, which is idle.
            unsafe { result::memcpy_dtoh_async(&mut total, out.n_changes, stream.cu_stream()) }
                .map_err(driver)?;
            stream.synchronize().map_err(driver)?;
            let n = total[0] as usize;
            if total[0] > out.capacity {
                // More changes than room: compaction again with room for all (the masks, counts
                // and codes on this stream are still this chunk's).
                let lane = &mut self.scratch.lanes[lane];
                out.capacity = total[0];
                out.change_pair = lane.change_pair.at_least(&stream, n * 8)?;
                out.change_code = lane.change_code.at_least(&stream, n)?;
                self.device.compact(&stream, &out, len, rules)?;
                stream.synchronize().map_err(driver)?;
            }
            let mut pairs = vec![0u64; n];
            let mut codes = vec![0u8; n];
            if n > 0 {
                // SAFETY: el_compact wrote `n` entries of each (no more than the capacity).
                unsafe {
                    result::memcpy_dtoh_async(&mut pairs, out.change_pair, stream.cu_stream())
                        .map_err(driver)?;
                    result::memcpy_dtoh_async(&mut codes, out.change_code, stream.cu_stream())
                        .map_err(driver)?;
                }
                stream.synchronize().map_err(driver)?;
            }
            self.timings.bytes_down += 8 + n * 9;
            found = pairs.into_iter().zip(codes).collect();
        }
        self.found[pending.chunk] = Some(found);
        Ok(())
    }
}

impl Backend for Run<'_> {
    type Error = GpuError;

    fn host_buffer<T: Placeable>(&mut self, len: usize) -> Result<HostBuffer<T>, GpuError> {
        let bytes = (len * size_of::<T>()).max(8);
        let reused = {
            let mut pool = self
                .device
                .pool
                .lock()
                .map_err(|_| driver("pool poisoned"))?;
            // The smallest that fits: a large buffer stays for a large output.
            let fit = (0..pool.len())
                .filter(|&k| pool[k].len() >= bytes)
                .min_by_key(|&k| pool[k].len());
            fit.map(|k| pool.swap_remove(k))
        };
        let mut slice = match reused {
            Some(slice) => slice,
            // SAFETY: page-locked memory without write-combining (the host reads it); every value
            // the output reads is written by a copy from the device first.
            None => unsafe { self.device.ctx.alloc_pinned_with_flags::<u8>(bytes, 0) }
                .map_err(driver)?,
        };
        let ptr = slice.as_mut_ptr().map_err(driver)?.cast::<T>();
        Ok(HostBuffer::from(Pinned {
            slice: Some(slice),
            ptr,
            len,
            pool: self.device.pool.clone(),
        }))
    }

    fn load_program(&mut self, program: &EncodedProgram) -> Result<(), GpuError> {
        let stream = &self.device.streams[0];
        let raw = RawProgram::new(program, &mut self.scratch.program.upload(stream))?;
        // Both streams read it.
        stream.synchronize().map_err(driver)?;
        self.timings.bytes_up += self.scratch.program.bytes;
        self.program = Some(raw);
        Ok(())
    }

    unsafe fn start(&mut self, chunk: Chunk) -> Result<(), GpuError> {
        let prog = self.program.expect("a program is loaded first");
        let index = self.started;
        self.started += 1;
        self.found.push(None);
        let lane = index % 2;
        self.collect(lane)?;
        let device = self.device;
        let stream = &device.streams[lane];
        let event = || {
            let e = device
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver)?;
            e.record(stream).map_err(driver)?;
            Ok::<_, GpuError>(e)
        };
        let (sizes, target, geometry) = (chunk.sizes, chunk.target, chunk.geometry);
        let start = event()?;
        let l = &mut self.scratch.lanes[lane];
        let cols = match &chunk.columns {
            ChunkColumns::Upload(columns) => {
                let room = staged_bytes(columns);
                let staging = l.staging.at_least(&device.ctx, room)?;
                let raw =
                    RawColumns::new(columns, &mut l.columns.upload_staged(stream, staging, room))?;
                self.timings.bytes_up += l.columns.bytes;
                raw
            }
            ChunkColumns::Kept { view, .. } => {
                // The kept arrays, read through the chunk's offsets (a few bytes a field).
                let kept = self.resident.expect("kept columns are on the device");
                let mut up = l.columns.upload(stream);
                let col_known = up.place(&view.col_known)?;
                let col_data = up.place(&view.col_data)?;
                self.timings.bytes_up += l.columns.bytes;
                RawColumns {
                    len: view.len,
                    words: view.words,
                    col_known,
                    col_data,
                    ..kept
                }
            }
        };
        let mut out = RawOutput {
            mode: target.mode,
            first: target.first,
            ..RawOutput::default()
        };
        let mut changes = None;
        if sizes.codes > 0 {
            out.codes = l.codes.at_least(stream, sizes.codes)?;
        }
        if sizes.planes > 0 {
            out.planes = l.planes.at_least(stream, sizes.planes * 4)?;
        }
        if target.mode == 2 {
            assert!(sizes.previous <= target.room, "previous codes");
            if let Some(at) = target.kept_previous {
                let (kept, bytes) = self.outcomes.ok_or_else(|| {
                    driver("changes from kept outcomes: keep_outcomes on these columns first")
                })?;
                if at + sizes.previous > bytes {
                    return Err(driver(
                        "the kept outcomes are not of these citizens and rules",
                    ));
                }
                out.previous = kept + at as u64;
            } else {
                out.previous = l.previous.at_least(stream, sizes.previous)?;
                // SAFETY: `target.previous` points at `target.room` previous codes.
                let previous =
                    unsafe { std::slice::from_raw_parts(target.previous, sizes.previous) };
                unsafe { result::memcpy_htod_async(out.previous, previous, stream.cu_stream()) }
                    .map_err(driver)?;
                self.timings.bytes_up += sizes.previous;
            }
            out.masks = l.masks.at_least(stream, sizes.masks * 4)?;
            out.counts = l.counts.at_least(stream, sizes.counts * 8)?;
            // SAFETY: the counts' bytes, on this stream; el_rules adds to them.
            unsafe { result::memset_d8_async(out.counts, 0, sizes.counts * 8, stream.cu_stream()) }
                .map_err(driver)?;
            out.n_changes = l.n_changes.at_least(stream, 8)?;
            out.capacity = sizes.changes as u64;
            out.change_pair = l.change_pair.at_least(stream, sizes.changes * 8)?;
            out.change_code = l.change_code.at_least(stream, sizes.changes)?;
            changes = Some((out, chunk.citizens.len() as u64, prog.n_rules));
        }
        let cond_words = l.cond_words.at_least(stream, sizes.cond_words * 4)?;
        let uploaded = event()?;

        let config = |y: u32| LaunchConfig {
            grid_dim: (geometry.grid_x, y, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        if geometry.conditions_y > 0 {
            let mut launch = stream.launch_builder(&device.conditions);
            launch.arg(&cols).arg(&prog).arg(&cond_words);
            // SAFETY: the arguments match el_conditions; cond_words holds `sizes.cond_words`
            // (conditions × the chunk's words), as the host model checks for this geometry.
            unsafe { launch.launch(config(geometry.conditions_y)) }.map_err(driver)?;
        }
        let conditions = event()?;
        if geometry.rules_y > 0 {
            let mut launch = stream.launch_builder(&device.rules);
            launch.arg(&cols).arg(&prog).arg(&cond_words).arg(&out);
            // SAFETY: the arguments match el_rules; the output buffers hold `sizes`.
            unsafe { launch.launch(config(geometry.rules_y)) }.map_err(driver)?;
            if let Some((out, len, rules)) = &changes {
                let mut launch = stream.launch_builder(&device.scan);
                launch.arg(out).arg(len);
                let one = LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (SCAN_THREADS, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: the arguments match el_scan; the counts hold `len` values.
                unsafe { launch.launch(one) }.map_err(driver)?;
                device.compact(stream, out, *len, *rules)?;
            }
        }
        let rules_done = event()?;
        // Straight into the caller's page-locked output, at the chunk's place.
        if sizes.codes > 0 {
            assert!(sizes.codes <= target.room, "codes");
            // SAFETY: `target.codes` has `target.room` codes and stays untouched until
            // `finish` (the launch loop's contract); the memory is page-locked.
            let dst = unsafe { std::slice::from_raw_parts_mut(target.codes, sizes.codes) };
            unsafe { result::memcpy_dtoh_async(dst, out.codes, stream.cu_stream()) }
                .map_err(driver)?;
            self.timings.bytes_down += sizes.codes;
        }
        if sizes.planes > 0 {
            assert!(sizes.planes <= target.room, "planes");
            // SAFETY: as above, for the planes.
            let dst = unsafe { std::slice::from_raw_parts_mut(target.planes, sizes.planes) };
            unsafe { result::memcpy_dtoh_async(dst, out.planes, stream.cu_stream()) }
                .map_err(driver)?;
            self.timings.bytes_down += sizes.planes * 4;
        }
        let downloaded = event()?;
        self.scratch.lanes[lane].pending = Some(Pending {
            chunk: index,
            events: [start, uploaded, conditions, rules_done, downloaded],
            changes,
        });
        self.timings.chunks += 1;
        Ok(())
    }

    fn finish(&mut self) -> Result<Vec<Found>, GpuError> {
        for lane in 0..2 {
            self.collect(lane)?;
        }
        self.started = 0;
        Ok(std::mem::take(&mut self.found)
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect())
    }
}
