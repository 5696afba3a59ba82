//! Benchmark and parity check: N synthetic citizens × M synthetic rules on the CPU batch path and,
//! when present, the GPU kernels (transfers and kernels timed apart). `--export DIR` writes the
//! encoded columns and program, and the CPU codes, for `bench/cupy_baseline.py`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use engine::batch::{BatchOutcomes, evaluate_batch};
use engine::columns::ProfileColumns;
use engine::program::Program;
use engine::{Catalogue, Date, Rule};
use kernels::encode::{EncodedColumns, EncodedProgram};
use kernels::engine_select::{EngineChoice, SelectError};
use kernels::gpu::{Columns, Gpu, GpuError, GpuTimings};
use kernels::launch::Limits;
use kernels::output::{Codes, NO_PREVIOUS, Output, Outputs};
use serde_json::json;

#[derive(Parser)]
#[command(about = "GPU vs CPU batch evaluation of synthetic citizens × rules, with parity check")]
struct Args {
    #[arg(long, default_value_t = 1_000_000)]
    citizens: usize,
    #[arg(long, default_value_t = 1_000)]
    rules: usize,
    /// auto | cpu | gpu: auto runs the GPU too when there is one; gpu fails without one.
    #[arg(long, default_value = "auto")]
    engine: EngineChoice,
    /// CPU threads (default: all).
    #[arg(long)]
    threads: Option<usize>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Evaluation date, YYYY-MM-DD.
    #[arg(long, default_value = "2025-06-15")]
    as_of: String,
    /// Write the encoded columns and program, and the CPU codes, here.
    #[arg(long)]
    export: Option<PathBuf>,
    /// After the GPU runs, run `kernels/bench/cupy_baseline.py` on the export with this Python
    /// (one with CuPy) and compare end to end, in this one run. Needs --export.
    #[arg(long, requires = "export")]
    cupy_python: Option<PathBuf>,
    /// GPU evaluations of each kind: the first includes one-time costs (allocating device and
    /// page-locked buffers), the later ones are a worker's steady state; the best is reported.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Also run the verdicts in chunks of this many citizens (as for a population larger than
    /// device memory).
    #[arg(long)]
    chunk_citizens: Option<usize>,
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let as_of = Date::parse(&args.as_of).with_context(|| format!("bad --as-of {}", args.as_of))?;
    // Decide about the GPU before spending minutes on data.
    let gpu = match args.engine {
        EngineChoice::Cpu => {
            match Gpu::detect() {
                Ok(gpu) => println!("engine cpu: GPU {} present but not used", gpu.name()),
                Err(e) => println!("engine cpu: no GPU present ({e})"),
            }
            None
        }
        EngineChoice::Auto => Gpu::detect()
            .inspect_err(|e| println!("engine auto: no GPU present ({e}); CPU only"))
            .ok(),
        EngineChoice::Gpu => Some(Gpu::detect().map_err(SelectError::from)?),
    };

    let catalogue = Catalogue::bundled();
    let start = Instant::now();
    let rules = loadtest::citizens::rules(&catalogue, args.rules, args.seed);
    let refs: Vec<&Rule> = rules.iter().collect();
    let profiles = loadtest::citizens::generate(
        &catalogue,
        args.citizens,
        loadtest::citizens::CitizenSpec {
            seed: args.seed,
            missing_rate: 0.05,
            schemes: args.rules,
        },
        threads,
    );
    let program = Program::compile(&refs);
    let columns = ProfileColumns::new(&catalogue, &profiles);
    drop(profiles);
    let tabulated = program.rules.iter().filter(|r| r.table.is_some()).count();
    println!(
        "{} citizens × {} rules: {} distinct conditions, {tabulated} rules tabulated; generated in {}",
        args.citizens,
        args.rules,
        program.conditions.len(),
        ms(start.elapsed())
    );

    let start = Instant::now();
    let batch = evaluate_batch(&program, &refs, &columns, as_of, threads);
    let cpu = start.elapsed();
    println!("cpu batch ({threads} threads): {}", ms(cpu));

    let start = Instant::now();
    let encoded_columns = EncodedColumns::new(&columns);
    let encoded = EncodedProgram::new(&program, &refs, &columns, as_of)?;
    println!("encode (host): {}", ms(start.elapsed()));

    if let Some(dir) = &args.export {
        export(dir, &encoded_columns, &encoded, |c, r| batch.code(c, r))?;
        println!("exported to {}", dir.display());
    }

    if let Some(gpu) = gpu {
        gpu_runs(
            &gpu,
            &args,
            (&program, &refs),
            &columns,
            encoded_columns,
            &encoded,
            (&batch, cpu),
            threads,
        )?;
    }
    Ok(())
}

fn line(t: &GpuTimings) -> String {
    format!(
        "upload {} ({} MB), conditions {}, rules {}, download {} ({} MB); kernels {}, transfers {}, wall {} in {} chunk(s)",
        ms(t.upload),
        t.bytes_up / 1_000_000,
        ms(t.conditions),
        ms(t.rules),
        ms(t.download),
        t.bytes_down / 1_000_000,
        ms(t.kernels()),
        ms(t.transfers()),
        ms(t.wall),
        t.chunks
    )
}

/// Every output form, on columns uploaded per call and kept on the device, each checked against
/// the CPU batch codes; then a patch of 1 % of the citizens, and small batches against the CPU
/// (the fixed cost that sets `auto`'s threshold).
#[allow(clippy::too_many_arguments)]
fn gpu_runs(
    gpu: &Gpu,
    args: &Args,
    (program, refs): (&Program, &[&Rule]),
    columns: &ProfileColumns,
    encoded_columns: EncodedColumns,
    encoded: &EncodedProgram,
    (batch, cpu): (&BatchOutcomes, Duration),
    threads: usize,
) -> Result<()> {
    let (citizens, rules) = (args.citizens, args.rules);
    let name = gpu.name();
    let check = |what: &str, outputs: &Outputs, previous: Option<&Codes>| -> Result<()> {
        let differ = match outputs {
            Outputs::Codes(codes) => (0..citizens)
                .flat_map(|c| (0..rules).map(move |r| (c, r)))
                .filter(|&(c, r)| codes.code(c, r) != batch.code(c, r))
                .count(),
            Outputs::Verdicts(v) => (0..citizens)
                .flat_map(|c| (0..rules).map(move |r| (c, r)))
                .filter(|&(c, r)| v.verdict(c, r) != batch.get(c, r).verdict)
                .count(),
            Outputs::Changes(changes) => {
                let previous = previous.expect("changes come from previous codes");
                let codes = changes.applied_to(previous);
                (0..citizens)
                    .flat_map(|c| (0..rules).map(move |r| (c, r)))
                    .filter(|&(c, r)| codes.code(c, r) != batch.code(c, r))
                    .count()
            }
        };
        if differ > 0 {
            bail!("parity ({what}): {differ} (citizen, rule) pairs differ between GPU and CPU");
        }
        println!(
            "  parity ({what}): GPU == CPU on all {} pairs",
            citizens * rules
        );
        Ok(())
    };
    let repeat = args.repeat.max(1);
    let best = |what: &str,
                f: &mut dyn FnMut() -> Result<(Outputs, GpuTimings), GpuError>,
                previous: Option<&Codes>|
     -> Result<GpuTimings> {
        let mut fastest: Option<GpuTimings> = None;
        for run in 1..=repeat {
            let (outputs, t) = f()?;
            println!(
                "gpu {name} {what} run {run}: {}; {} MB to the host",
                line(&t),
                outputs.bytes() / 1_000_000
            );
            if run == repeat {
                check(what, &outputs, previous)?;
            }
            if fastest.is_none_or(|f| t.wall < f.wall) {
                fastest = Some(t);
            }
        }
        Ok(fastest.expect("at least one run"))
    };

    let host = Columns::Host(&encoded_columns);
    let codes = best(
        "codes, columns uploaded",
        &mut || gpu.evaluate(host, encoded, Output::Codes),
        None,
    )?;
    let verdicts = best(
        "verdicts, columns uploaded",
        &mut || gpu.evaluate(host, encoded, Output::Verdicts),
        None,
    )?;
    if let Some(chunk) = args.chunk_citizens {
        let limits = Limits {
            chunk_citizens: chunk,
            change_capacity: 1 << 24,
        };
        best(
            &format!("verdicts, chunks of {chunk}"),
            &mut || gpu.evaluate_with(host, encoded, Output::Verdicts, limits),
            None,
        )?;
    }

    let started = Instant::now();
    let mut kept = gpu.keep(encoded_columns)?;
    println!("keep the columns on the device: {}", ms(started.elapsed()));
    let resident = best(
        "verdicts, columns kept",
        &mut || gpu.evaluate(Columns::Resident(&kept), encoded, Output::Verdicts),
        None,
    )?;
    // A rule change's page: previous outcomes that differ from the new ones for 1 % of pairs.
    let previous = Codes::from_fn(citizens, rules, |c, r| {
        if (c * 31 + r * 17) % 100 == 0 {
            NO_PREVIOUS
        } else {
            batch.code(c, r)
        }
    });
    let changes = best(
        "changes from previous (1 % differ), columns kept",
        &mut || {
            gpu.evaluate(
                Columns::Resident(&kept),
                encoded,
                Output::ChangesFrom(&previous),
            )
        },
        Some(&previous),
    )?;

    // The same page from outcomes kept on the device: only the changes cross the bus. Each run
    // finds the outcomes it changed put back first, by writing the pairs that differ (untimed,
    // and printed: a worker writes those it re-evaluated on the CPU the same way).
    gpu.keep_outcomes(&mut kept, &previous)?;
    let Outputs::Changes(back) = Outputs::from_codes(
        Output::ChangesFrom(&Codes::from_fn(citizens, rules, |c, r| batch.code(c, r))),
        citizens,
        rules,
        |c, r| previous.code(c, r),
    ) else {
        bail!("asked for changes")
    };
    let from_kept = best(
        "changes from kept outcomes (1 % differ), columns kept",
        &mut || {
            let started = Instant::now();
            gpu.update_outcomes(&mut kept, &back)?;
            println!(
                "  put back {} kept outcomes in {}",
                back.pairs.len(),
                ms(started.elapsed())
            );
            gpu.evaluate(
                Columns::Resident(&kept),
                encoded,
                Output::ChangesFromKept(&previous),
            )
        },
        Some(&previous),
    )?;

    // 1 % of the citizens change: only their values are uploaded.
    let catalogue = Catalogue::bundled();
    let changed: Vec<usize> = (0..citizens).step_by(100).collect();
    let mut updated = columns.clone();
    let donors = loadtest::citizens::generate(
        &catalogue,
        changed.len(),
        loadtest::citizens::CitizenSpec {
            seed: args.seed + 1,
            missing_rate: 0.05,
            schemes: rules,
        },
        threads,
    );
    for (&i, profile) in changed.iter().zip(&donors) {
        if !updated.update(i, profile) {
            bail!("citizen {i}'s new lists do not fit the kept columns");
        }
    }
    let started = Instant::now();
    let patch = kept
        .columns()
        .patch(&updated, &changed)
        .context("same layout")?;
    let built = started.elapsed();
    let started = Instant::now();
    gpu.update(&mut kept, &patch)?;
    println!(
        "patch {} changed citizens: {} writes, {} MB, built in {}, applied on the device in {}",
        changed.len(),
        patch.len(),
        patch.bytes() / 1_000_000,
        ms(built),
        ms(started.elapsed())
    );
    let as_of = Date::parse(&args.as_of).expect("checked");
    // The patch may add strings: the program's acceptance tables follow the updated interners.
    let after_patch = EncodedProgram::new(program, refs, &updated, as_of)?;
    let (outputs, _) = gpu.evaluate(Columns::Resident(&kept), &after_patch, Output::Codes)?;
    let cpu_after = evaluate_batch(program, refs, &updated, as_of, threads);
    let Outputs::Codes(codes_after) = outputs else {
        bail!("asked for codes")
    };
    let differ = (0..citizens)
        .flat_map(|c| (0..rules).map(move |r| (c, r)))
        .filter(|&(c, r)| codes_after.code(c, r) != cpu_after.code(c, r))
        .count();
    if differ > 0 {
        bail!("parity after the patch: {differ} pairs differ");
    }
    println!("  parity after the patch: GPU (patched columns) == CPU (updated columns)");

    let ratio = |t: &GpuTimings| cpu.as_secs_f64() / t.wall.as_secs_f64();
    println!(
        "summary {citizens} × {rules} on {name}: CPU batch {}; GPU end to end (wall, best of {repeat}): codes {} ({:.1}×), verdicts {} ({:.1}×), verdicts on kept columns {} ({:.1}×), changes on kept columns {} ({:.1}×), changes from kept outcomes {} ({:.1}×); kernels {}",
        ms(cpu),
        ms(codes.wall),
        ratio(&codes),
        ms(verdicts.wall),
        ratio(&verdicts),
        ms(resident.wall),
        ratio(&resident),
        ms(changes.wall),
        ratio(&changes),
        ms(from_kept.wall),
        ratio(&from_kept),
        ms(resident.kernels()),
    );
    if let (Some(python), Some(dir)) = (&args.cupy_python, &args.export) {
        cupy(python, dir, &codes, &verdicts, &resident)?;
    }
    small_batches(gpu, &catalogue, args, threads)
}

/// The CuPy baseline on the same export, same GPU, and the end-to-end ratios: our codes and
/// verdicts with columns uploaded against CuPy's (which uploads too), and verdicts on kept
/// columns against CuPy's verdicts.
fn cupy(
    python: &Path,
    dir: &Path,
    codes: &GpuTimings,
    verdicts: &GpuTimings,
    resident: &GpuTimings,
) -> Result<()> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/bench/cupy_baseline.py");
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(dir)
        .output()
        .with_context(|| format!("running {} {}", python.display(), script.display()))?;
    let printed = String::from_utf8_lossy(&out.stdout);
    print!("{printed}");
    if !out.status.success() {
        bail!(
            "the CuPy baseline failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // "cupy codes: … end to end 1234.5 ms"
    let end_to_end = |kind: &str| -> Result<f64> {
        printed
            .lines()
            .find(|l| l.starts_with(&format!("cupy {kind}:")))
            .and_then(|l| l.rsplit_once("end to end "))
            .and_then(|(_, t)| t.trim_end_matches(" ms").parse().ok())
            .with_context(|| format!("no end-to-end time for {kind} in the baseline's output"))
    };
    let (cupy_codes, cupy_verdicts) = (end_to_end("codes")?, end_to_end("verdicts")?);
    let ratio = |cupy_ms: f64, ours: &GpuTimings| cupy_ms / (ours.wall.as_secs_f64() * 1e3);
    println!(
        "vs CuPy end to end: codes {:.1}×, verdicts {:.1}×, verdicts on kept columns {:.1}× (goal ≥ 5×)",
        ratio(cupy_codes, codes),
        ratio(cupy_verdicts, verdicts),
        ratio(cupy_verdicts, resident)
    );
    Ok(())
}

/// Fixed costs: batches of the bundled corpus' size (48 rules) on the GPU and the CPU, verdicts
/// out, columns encoded and uploaded per call. `auto`'s threshold (`ELIGIBILITY_GPU_MIN_PAIRS`)
/// belongs at the smallest size from which the GPU is faster at every larger size measured: on
/// an H200 against 16 CPU threads it was faster at 1,000–5,000 citizens, slower from 10,000 to
/// 100,000, so the first size it wins is not the threshold (kernels/README.md, "Figures").
fn small_batches(gpu: &Gpu, catalogue: &Catalogue, args: &Args, threads: usize) -> Result<()> {
    let as_of = Date::parse(&args.as_of).expect("checked");
    let rules = loadtest::citizens::rules(catalogue, 48, args.seed);
    let refs: Vec<&Rule> = rules.iter().collect();
    let program = Program::compile(&refs);
    // The smallest size from which the GPU has won every size so far.
    let mut crossover = None;
    for citizens in [
        500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000,
    ] {
        let profiles = loadtest::citizens::generate(
            catalogue,
            citizens,
            loadtest::citizens::CitizenSpec {
                seed: args.seed,
                missing_rate: 0.05,
                schemes: 48,
            },
            threads,
        );
        let columns = ProfileColumns::new(catalogue, &profiles);
        let cpu = (0..5)
            .map(|_| {
                let started = Instant::now();
                let _ = evaluate_batch(&program, &refs, &columns, as_of, threads);
                started.elapsed()
            })
            .min()
            .expect("five runs");
        let mut gpu_best = Duration::MAX;
        for _ in 0..5 {
            let started = Instant::now();
            let encoded = EncodedProgram::new(&program, &refs, &columns, as_of)?;
            let encoded_columns = EncodedColumns::new(&columns);
            gpu.evaluate(Columns::Host(&encoded_columns), &encoded, Output::Verdicts)?;
            gpu_best = gpu_best.min(started.elapsed());
        }
        println!(
            "small batch {citizens} × 48: CPU {} · GPU {} (encode + upload + kernels + verdicts)",
            ms(cpu),
            ms(gpu_best)
        );
        crossover = match (gpu_best < cpu, crossover) {
            (false, _) => None,
            (true, None) => Some(citizens * 48),
            (true, won) => won,
        };
    }
    match crossover {
        Some(pairs) => println!(
            "auto threshold: the GPU is faster at every size from {pairs} pairs (ELIGIBILITY_GPU_MIN_PAIRS)"
        ),
        None => println!("auto threshold: the GPU was not faster at 1,000,000 × 48 pairs"),
    }
    Ok(())
}

/// One raw little-endian file per encoded array, a manifest naming them, and the CPU codes
/// rule-major (`codes_cpu.bin`, `codes[rule * citizens + citizen]`).
fn export(
    dir: &Path,
    columns: &EncodedColumns,
    program: &EncodedProgram,
    cpu_code: impl Fn(usize, usize) -> u8,
) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut arrays = serde_json::Map::new();
    let mut write = |name: &str, dtype: &str, bytes: Vec<u8>| -> Result<()> {
        let file = format!("{name}.bin");
        std::fs::write(dir.join(&file), bytes).with_context(|| format!("writing {file}"))?;
        arrays.insert(name.into(), json!({"dtype": dtype, "file": file}));
        Ok(())
    };
    let u8s = |v: &[u8]| v.to_vec();
    let u32s = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let u64s = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let i64s = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let f64s = |v: &[f64]| v.iter().flat_map(|x| x.to_le_bytes()).collect();
    write("col_kind", "uint32", u32s(&columns.col_kind))?;
    write("col_known", "uint64", u64s(&columns.col_known))?;
    write("col_data", "uint64", u64s(&columns.col_data))?;
    write("col_width", "uint32", u32s(&columns.col_width))?;
    write("ints", "int64", i64s(&columns.ints))?;
    write("nums", "float64", f64s(&columns.nums))?;
    write("u32s", "uint32", u32s(&columns.u32s))?;
    write("cond_field", "uint32", u32s(&program.cond_field))?;
    write("cond_test", "uint32", u32s(&program.cond_test))?;
    write("cond_arg", "uint64", u64s(&program.cond_arg))?;
    write("cond_count", "uint32", u32s(&program.cond_count))?;
    write("cond_ints", "int64", i64s(&program.cond_ints))?;
    write("cond_nums", "float64", f64s(&program.cond_nums))?;
    write("accept", "uint8", u8s(&program.accept))?;
    write("rule_applicable", "uint8", u8s(&program.rule_applicable))?;
    write(
        "rule_denominator",
        "uint64",
        u64s(&program.rule_denominator),
    )?;
    write("rule_postfix", "uint64", u64s(&program.rule_postfix))?;
    write(
        "rule_postfix_len",
        "uint32",
        u32s(&program.rule_postfix_len),
    )?;
    write("rule_excl", "uint64", u64s(&program.rule_excl))?;
    write("rule_n_excl", "uint32", u32s(&program.rule_n_excl))?;
    write("instr_op", "uint32", u32s(&program.instr_op))?;
    write("instr_a", "uint32", u32s(&program.instr_a))?;
    write("instr_b", "uint32", u32s(&program.instr_b))?;
    write("instr_scale", "uint64", u64s(&program.instr_scale))?;
    write("excl", "uint32", u32s(&program.excl))?;
    let citizens = columns.len as usize;
    let codes: Vec<u8> = (0..program.n_rules())
        .flat_map(|r| (0..citizens).map(move |c| (c, r)))
        .map(|(c, r)| cpu_code(c, r))
        .collect();
    write("codes_cpu", "uint8", codes)?;
    let manifest = json!({
        "len": columns.len,
        "words": columns.words,
        "n_conditions": program.n_conditions(),
        "n_rules": program.n_rules(),
        "arrays": arrays,
    });
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)?,
    )?;
    Ok(())
}
