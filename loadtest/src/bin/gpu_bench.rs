//! Benchmark and parity check: N synthetic citizens × M synthetic rules on the CPU batch path and,
//! when present, the GPU kernels (transfers and kernels timed apart). `--export DIR` writes the
//! encoded columns and program, and the CPU codes, for `bench/cupy_baseline.py`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use engine::batch::evaluate_batch;
use engine::columns::ProfileColumns;
use engine::program::Program;
use engine::{Catalogue, Date, Rule};
use kernels::encode::{EncodedColumns, EncodedProgram};
use kernels::engine_select::{EngineChoice, SelectError};
use kernels::gpu::Gpu;
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
    /// GPU evaluations of the same batch: the first includes one-time costs (allocating the
    /// page-locked download buffer), the later ones are a worker's steady state.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
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
        let mut last = None;
        for run in 1..=args.repeat.max(1) {
            // The previous run's codes are dropped first, so their buffer can be reused.
            drop(last.take());
            let (codes, t) = gpu.evaluate(&encoded_columns, &encoded)?;
            println!(
                "gpu {} run {run}: upload {}, conditions kernel {}, rules kernel {}, download {}; kernels {}, transfers {}, total {}",
                gpu.name(),
                ms(t.upload),
                ms(t.conditions),
                ms(t.rules),
                ms(t.download),
                ms(t.kernels()),
                ms(t.transfers()),
                ms(t.kernels() + t.transfers())
            );
            last = Some((codes, t));
        }
        let (codes, t) = last.expect("at least one run");
        let mismatches = (0..args.rules)
            .flat_map(|r| (0..args.citizens).map(move |c| (c, r)))
            .filter(|&(c, r)| codes.code(c, r) != batch.code(c, r))
            .count();
        if mismatches > 0 {
            bail!("parity: {mismatches} (citizen, rule) codes differ between GPU and CPU");
        }
        println!(
            "parity: GPU == CPU on all {} codes; speed-up kernels {:.1}×, with transfers {:.1}×",
            args.citizens * args.rules,
            cpu.as_secs_f64() / t.kernels().as_secs_f64(),
            cpu.as_secs_f64() / (t.kernels() + t.transfers()).as_secs_f64()
        );
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
