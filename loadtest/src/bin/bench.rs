//! `bench`: the engine's speed, measured. The figures of docs/performance.md, "The engine", come
//! from this binary.
//!
//! Scenarios (synthetic corpus over all states, synthetic citizens):
//! 0. reading one profile update's text, the general way and the evaluator's one pass;
//! 1. one citizen × all rules, verdict + score (the scalar fast path);
//! 2. the same with full traces (conditions, gaps, next steps), then with every text written;
//!    and what a date of birth adds to a pass (the next birthday that changes an outcome);
//! 3. many citizens × one changed rule (compiled program, CPU batch);
//! 4. many citizens × all rules (CPU batch);
//! 5. with `--features zen`: zen-engine on the same decision for the same citizens, side by side,
//!    with a byte-for-byte parity check of every outcome.

use anyhow::Result;
use clap::Parser;
use engine::batch::{BatchOutcomes, evaluate_batch, evaluate_batch_into};
use engine::calendar::AgeLimits;
use engine::columns::ProfileColumns;
use engine::profile_text::ReadProfile;
use engine::program::Program;
use engine::{Catalogue, Date, Profile, Rule, evaluate, outcome};
use loadtest::citizens::CitizenSpec;
use std::fmt::Write;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "Engine benchmarks")]
struct Args {
    /// Rules in the synthetic corpus.
    #[arg(long, default_value_t = 1000)]
    rules: usize,
    /// Citizens for the all-rules batch.
    #[arg(long, default_value_t = 1_000_000)]
    citizens: usize,
    /// Citizens for the one-changed-rule batch.
    #[arg(long, default_value_t = 100_000)]
    rule_change_citizens: usize,
    /// Citizens for the one-citizen scenarios (each timed on its own).
    #[arg(long, default_value_t = 2000)]
    single_citizens: usize,
    /// Citizens for the zen-engine comparison.
    #[arg(long, default_value_t = 200)]
    zen_citizens: usize,
    /// Worker threads for batches (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Repetitions of each batch (the minimum and median are reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let catalogue = Catalogue::bundled();
    let as_of = Date::parse("2025-06-01").expect("valid date");
    println!("# eligibility engine benchmark");
    println!(
        "machine: {} core(s), {}; threads for batches: {threads}",
        core_count(),
        cpu_model()
    );
    let rules = loadtest::citizens::rules(&catalogue, args.rules, 7);
    let refs: Vec<&Rule> = rules.iter().collect();
    let leaves: usize = rules.iter().map(|r| r.fields_read().len()).sum();
    println!(
        "corpus: {} synthetic rules over 36 states + central ({leaves} field reads)",
        rules.len()
    );
    println!();
    println!("| scenario | figure | goal |");
    println!("|---|---|---|");

    let mut checksum = 0u64;
    // 0: reading a profile update's text (what the evaluator does to every record): the
    // general way (a `serde_json::Value`, `Profile::from_json` with its hash, the text written
    // back) beside `ReadProfile::read`'s one pass, alternated citizen by citizen (which goes
    // first alternating too, so that neither always finds the text in cache).
    let mut texts = loadtest::citizens::Citizens::new(CitizenSpec {
        seed: 17,
        missing_rate: 0.05,
        schemes: args.rules,
    });
    let (mut general, mut short) = (Vec::new(), Vec::new());
    for at in 0..args.single_citizens {
        let text = texts.next_profile().to_string();
        let general_way = || -> Result<(Profile, String)> {
            let json: serde_json::Value = serde_json::from_str(&text)?;
            let profile = Profile::from_json(&catalogue, &json, "bench")?;
            Ok((profile, serde_json::to_string(&json)?))
        };
        let one_pass = || ReadProfile::read(&catalogue, &text, "bench");
        let ((a, t), (b, u)) = if at % 2 == 0 {
            let first = timed(general_way);
            (first, timed(one_pass))
        } else {
            let first = timed(one_pass);
            (timed(general_way), first)
        };
        general.push(t);
        short.push(u);
        let ((profile, stored), read) = (a?, b?);
        anyhow::ensure!(
            read.text == stored && read.profile.input_snapshot_hash == profile.input_snapshot_hash
        );
        checksum += read.text.len() as u64;
    }
    row(
        "reading 1 profile update's text: JSON value, profile, hash, text to store (the general way)",
        &percentiles(&mut general),
        "",
    );
    row(
        "the same texts read in one pass (`ReadProfile::read`, the evaluator's way)",
        &percentiles(&mut short),
        "",
    );
    // 1 and 2: one citizen at a time against every rule.
    let singles = citizens(&catalogue, args.single_citizens, 0.05, args.rules, 1, 101);
    let (program, compile) = timed(|| Program::compile(&refs));
    let mut compiled = Vec::with_capacity(singles.len());
    for profile in &singles {
        let start = Instant::now();
        let outcomes = program.evaluate_one(&refs, profile, as_of);
        compiled.push(start.elapsed());
        checksum += u64::from(outcomes[0].score);
    }
    row(
        &format!(
            "1 citizen × {} rules, verdict + score (compiled program, 1 thread)",
            rules.len()
        ),
        &format!(
            "{} (program compiled once in {})",
            percentiles(&mut compiled),
            ms(compile)
        ),
        "≤ 50 µs",
    );
    let mut fast = Vec::with_capacity(singles.len());
    for profile in &singles {
        let start = Instant::now();
        for rule in &refs {
            checksum += u64::from(outcome(rule, profile, as_of).score);
        }
        fast.push(start.elapsed());
    }
    row(
        &format!(
            "1 citizen × {} rules, verdict + score (scalar)",
            rules.len()
        ),
        &percentiles(&mut fast),
        "≤ 50 µs",
    );
    let mut traced = Vec::with_capacity(singles.len());
    for profile in &singles {
        let start = Instant::now();
        let mut evaluations = Vec::with_capacity(refs.len());
        evaluations.extend(
            refs.iter()
                .filter_map(|r| evaluate(&catalogue, r, profile, as_of).ok()),
        );
        checksum += evaluations.iter().map(|e| e.gaps.len() as u64).sum::<u64>();
        traced.push(start.elapsed());
    }
    row(
        &format!("1 citizen × {} rules, full traces and gaps", rules.len()),
        &percentiles(&mut traced),
        "≤ 1 ms",
    );
    // What a date of birth adds to each pass that stores a profile: finding the next birthday
    // that changes an outcome (evaluating the state's age-testing rules at each turning age
    // ahead until one changes), beside the verdicts of the same rules.
    let mut by_state = std::collections::HashMap::new();
    let born = born_citizens(&catalogue, args.single_citizens, args.rules, as_of)?;
    let (mut ages, mut verdicts) = (Vec::new(), Vec::new());
    for (profile, state) in &born {
        let (limits, holdable) = by_state
            .entry(state.clone())
            .or_insert_with(|| age_limits(&catalogue, &rules, state.as_deref()));
        let start = Instant::now();
        let next = limits.next_change(&catalogue, &rules, profile, as_of);
        ages.push(start.elapsed());
        checksum += next.map_or(0, |d| d.day_number() as u64);
        let start = Instant::now();
        for &rule in holdable.iter() {
            checksum += u64::from(outcome(&rules[rule], profile, as_of).score);
        }
        verdicts.push(start.elapsed());
    }
    row(
        "1 citizen with a date of birth: next birthday that changes an outcome (the state's rules)",
        &percentiles(&mut ages),
        "",
    );
    row(
        "the same citizens: verdict + score of the state's rules (scalar), for scale",
        &percentiles(&mut verdicts),
        "",
    );
    // Gap texts and next steps are written where they are read; here every one is written,
    // into one buffer as a serializer would.
    let mut written = Vec::with_capacity(singles.len());
    let mut text = String::with_capacity(1 << 20);
    for profile in &singles {
        let start = Instant::now();
        text.clear();
        for rule in &refs {
            if let Ok(e) = evaluate(&catalogue, rule, profile, as_of) {
                for gap in &e.gaps {
                    writeln!(text, "{}", gap.gap_description)?;
                }
                for step in &e.next_steps {
                    writeln!(text, "{step}")?;
                }
            }
        }
        written.push(start.elapsed());
        checksum += text.len() as u64;
    }
    row(
        &format!(
            "1 citizen × {} rules, full traces and gaps, every gap text and next step written",
            rules.len()
        ),
        &percentiles(&mut written),
        "",
    );

    // 3: one changed rule over many citizens.
    let many = citizens(
        &catalogue,
        args.rule_change_citizens,
        0.05,
        args.rules,
        threads,
        202,
    );
    let (columns, build) = timed(|| ProfileColumns::new(&catalogue, &many));
    let one = [refs[1]];
    let one_program = Program::compile(&one);
    let times = repeat(args.repeat, || {
        let outcomes = evaluate_batch(&one_program, &one, &columns, as_of, threads);
        checksum += u64::from(outcomes.code(0, 0));
    });
    row(
        &format!(
            "{} citizens × 1 changed rule (CPU batch, {threads} threads)",
            many.len()
        ),
        &format!(
            "{} (min {}; columns built once in {})",
            ms(median(&times)),
            ms(min(&times)),
            ms(build)
        ),
        "≤ 50 ms",
    );
    drop((columns, many, singles));

    // 4: every citizen against every rule.
    let all = citizens(&catalogue, args.citizens, 0.05, args.rules, threads, 303);
    let (columns, build) = timed(|| ProfileColumns::new(&catalogue, &all));
    let tabulated = program.rules.iter().filter(|r| r.table.is_some()).count();
    // One output buffer for every run, as a worker keeps one: the first run also pages it in.
    let mut outcomes = BatchOutcomes::new(all.len(), refs.len());
    let times = repeat(args.repeat, || {
        evaluate_batch_into(&program, &refs, &columns, as_of, threads, &mut outcomes);
        checksum += u64::from(outcomes.code(all.len() - 1, refs.len() - 1));
    });
    let pairs = all.len() as f64 * refs.len() as f64;
    row(
        &format!(
            "{} citizens × {} rules (CPU batch, {threads} threads)",
            all.len(),
            refs.len()
        ),
        &format!(
            "{} (min {}, max {} (the first run pages the output buffer in); {:.0} M pairs/s; {} conditions after dedup, {tabulated}/{} rules tabulated; compile {}, columns {})",
            secs(median(&times)),
            secs(min(&times)),
            secs(max(&times)),
            pairs / median(&times).as_secs_f64() / 1e6,
            program.conditions.len(),
            refs.len(),
            ms(compile),
            secs(build)
        ),
        "≤ 2 s",
    );
    drop((columns, all));

    zen_comparison(&catalogue, &refs, as_of, args.zen_citizens)?;
    println!();
    println!("(checksum {checksum})");
    Ok(())
}

#[cfg(feature = "zen")]
fn zen_comparison(catalogue: &Catalogue, rules: &[&Rule], as_of: Date, count: usize) -> Result<()> {
    let mut generator = loadtest::citizens::Citizens::new(CitizenSpec {
        seed: 404,
        missing_rate: 0.0,
        schemes: rules.len(),
    });
    let docs: Vec<serde_json::Value> = (0..count).map(|_| generator.next_profile()).collect();
    let profiles: Vec<Profile> = docs
        .iter()
        .map(|d| Profile::from_json(catalogue, d, "zen"))
        .collect::<Result<_, _>>()?;
    let (zen, build) = timed(|| loadtest::zen::ZenRules::new(rules));
    let zen = zen?;
    let mut zen_codes = Vec::with_capacity(count);
    let (_, zen_time) = timed(|| -> Result<()> {
        for doc in &docs {
            zen_codes.push(zen.evaluate(doc)?);
        }
        Ok(())
    });
    let mut ours = Vec::with_capacity(count);
    let (_, our_time) = timed(|| {
        for p in &profiles {
            ours.push(
                rules
                    .iter()
                    .map(|r| outcome(r, p, as_of).code())
                    .collect::<Vec<u8>>(),
            );
        }
    });
    let mismatches: usize = zen_codes
        .iter()
        .zip(&ours)
        .map(|(z, o)| z.iter().zip(o).filter(|(a, b)| a != b).count())
        .sum();
    let per = |d: Duration| d / count as u32;
    row(
        &format!(
            "zen-engine {}: 1 citizen × {} rules (same decision, same citizens)",
            "2.1",
            rules.len()
        ),
        &format!(
            "{} per citizen (graph built in {})",
            us(per(zen_time)),
            ms(build)
        ),
        "",
    );
    row(
        &format!("this engine, same {count} citizens (scalar, 1 thread)"),
        &format!(
            "{} per citizen: **{:.0}× faster** than zen-engine",
            us(per(our_time)),
            zen_time.as_secs_f64() / our_time.as_secs_f64()
        ),
        "≥ 5×",
    );
    row(
        "parity: zen-engine outcome codes == this engine's",
        &format!("{mismatches} mismatches in {} pairs", count * rules.len()),
        "0",
    );
    if mismatches > 0 {
        anyhow::bail!("zen-engine and this engine disagree on {mismatches} (citizen, rule) pairs");
    }
    Ok(())
}

#[cfg(not(feature = "zen"))]
fn zen_comparison(_: &Catalogue, _: &[&Rule], _: Date, _: usize) -> Result<()> {
    row(
        "zen-engine side by side",
        "skipped: build with `--features zen`",
        "",
    );
    Ok(())
}

fn citizens(
    catalogue: &Catalogue,
    count: usize,
    missing_rate: f64,
    schemes: usize,
    threads: usize,
    seed: u64,
) -> Vec<Profile> {
    loadtest::citizens::generate(
        catalogue,
        count,
        CitizenSpec {
            seed,
            missing_rate,
            schemes,
        },
        threads,
    )
}

/// The rules a citizen of `state` can hold (book indices), and which of them test the age.
fn age_limits(
    catalogue: &Catalogue,
    rules: &[Rule],
    state: Option<&str>,
) -> (AgeLimits, Vec<usize>) {
    let holdable: Vec<usize> = (0..rules.len())
        .filter(|&i| state.is_none_or(|s| rules[i].is_central() || rules[i].state == s))
        .collect();
    (AgeLimits::new(catalogue, rules, &holdable), holdable)
}

/// Synthetic citizens with a date of birth that gives their drawn age on `as_of`, spread over
/// the year; each with their state.
fn born_citizens(
    catalogue: &Catalogue,
    count: usize,
    schemes: usize,
    as_of: Date,
) -> Result<Vec<(Profile, Option<String>)>> {
    let mut draws = loadtest::citizens::Citizens::new(CitizenSpec {
        seed: 104,
        missing_rate: 0.05,
        schemes,
    });
    (0..count)
        .map(|i| {
            let mut json = draws.next_profile();
            let age = json["identity"]["age"].as_i64().unwrap_or(40);
            let born = as_of
                .add_years(-i32::try_from(age)?)
                .and_then(|d| d.plus_days(-((i * 37 % 365) as i64)))
                .ok_or_else(|| anyhow::anyhow!("no date {age} years before {as_of}"))?;
            json["identity"]["date_of_birth"] = born.to_string().into();
            let state = json["demographics"]["state"].as_str().map(str::to_string);
            let profile = Profile::from_json(catalogue, &json, "citizen")
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok((profile, state))
        })
        .collect()
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}

fn repeat(n: usize, mut f: impl FnMut()) -> Vec<Duration> {
    (0..n.max(1)).map(|_| timed(&mut f).1).collect()
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn max(times: &[Duration]) -> Duration {
    times.iter().copied().max().unwrap_or_default()
}

fn min(times: &[Duration]) -> Duration {
    times.iter().copied().min().unwrap_or_default()
}

fn percentiles(times: &mut [Duration]) -> String {
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    format!(
        "p50 {} · p99 {} per citizen ({} citizens)",
        us(at(0.5)),
        us(at(0.99)),
        times.len()
    )
}

fn row(scenario: &str, figure: &str, goal: &str) {
    println!("| {scenario} | {figure} | {goal} |");
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn core_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}
