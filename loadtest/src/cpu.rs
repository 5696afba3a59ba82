//! The CPU each part of the box has used, read from Linux's `/proc` (docs/performance.md, "CPU
//! per update"): a fleet bench samples it before and after a phase and charges the difference to
//! the phase's updates. CPU time is far steadier across machines of one kind than latency.
//!
//! The parts: each evaluator (pids in `FLEET_BENCH_EVALUATOR_PIDS`), split by its threads'
//! names (librdkafka's `rdk:*`, tokio's `tokio-runtime-w`, the rest); the local broker (its pid
//! file `FLEET_BENCH_BROKER_PID_FILE`); PostgreSQL (every `postgres` process, and the
//! postmaster's reaped children, so that a backend ending mid-phase is still counted); Redis
//! (`redis-server`); and this generator itself.

use std::collections::BTreeMap;
use std::path::Path;

/// Clock ticks per second of `/proc`'s times (`getconf CLK_TCK`: 100 on every Linux this
/// runs on).
const TICKS: f64 = 100.0;

/// CPU seconds used so far, by part (`evaluator`, `evaluator/<thread group>`, `broker`,
/// `postgresql`, `redis`, `generator`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CpuSample(pub BTreeMap<String, f64>);

/// A `/proc/<pid>/stat` line's (utime + stime, cutime + cstime) in seconds: the fields after the
/// command name, which may hold spaces and parentheses, so the line is split at its last `)`.
pub fn times(stat: &str) -> Option<(f64, f64)> {
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let tick = |i: usize| fields.get(i)?.parse::<f64>().ok();
    // After the name: state (field 3), …, utime (14), stime (15), cutime (16), cstime (17).
    Some((
        (tick(11)? + tick(12)?) / TICKS,
        (tick(13)? + tick(14)?) / TICKS,
    ))
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A thread's group: its name without the digits that number its kind (`rdk:broker3` and
/// `rdk:broker12` are one group).
fn group(name: &str) -> String {
    name.trim()
        .trim_end_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '/')
        .to_string()
}

impl CpuSample {
    /// The parts' CPU now.
    pub fn take() -> CpuSample {
        let mut parts = BTreeMap::new();
        let mut add = |part: String, seconds: f64| *parts.entry(part).or_insert(0.0) += seconds;
        let evaluators = std::env::var("FLEET_BENCH_EVALUATOR_PIDS").unwrap_or_default();
        for pid in evaluators.split(',').filter(|p| !p.is_empty()) {
            let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
                continue;
            };
            for thread in threads.flatten() {
                let path = thread.path();
                if let (Some((own, _)), Some(name)) = (
                    read(path.join("stat")).as_deref().and_then(times),
                    read(path.join("comm")),
                ) {
                    add("evaluator".into(), own);
                    add(format!("evaluator/{}", group(&name)), own);
                }
            }
        }
        let broker = std::env::var("FLEET_BENCH_BROKER_PID_FILE")
            .ok()
            .and_then(read)
            .and_then(|pid| read(format!("/proc/{}/stat", pid.trim())))
            .and_then(|stat| times(&stat));
        if let Some((own, _)) = broker {
            add("broker".into(), own);
        }
        let processes = std::fs::read_dir("/proc").into_iter().flatten().flatten();
        for process in processes {
            let path = process.path();
            let Some(name) = read(path.join("comm")) else {
                continue;
            };
            let part = match name.trim() {
                "postgres" => "postgresql",
                "redis-server" => "redis",
                _ => continue,
            };
            let Some(stat) = read(path.join("stat")) else {
                continue;
            };
            let Some((own, children)) = times(&stat) else {
                continue;
            };
            // The postmaster (whose parent is not PostgreSQL) holds its ended backends' time.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_string));
            let postmaster = part == "postgresql"
                && parent
                    .and_then(|ppid| read(format!("/proc/{ppid}/comm")))
                    .is_none_or(|parent| parent.trim() != "postgres");
            add(part.into(), own + if postmaster { children } else { 0.0 });
        }
        if let Some((own, _)) = read("/proc/self/stat").as_deref().and_then(times) {
            add("generator".into(), own);
        }
        CpuSample(parts)
    }

    /// Microseconds of CPU per update of each part between `self` (before) and `after`, for
    /// `updates` updates; the parts in the order the bench prints them, `all` last.
    pub fn per_update(&self, after: &CpuSample, updates: usize) -> Vec<(String, f64)> {
        let us = |part: &str| {
            let used = after.0.get(part).unwrap_or(&0.0) - self.0.get(part).unwrap_or(&0.0);
            used.max(0.0) * 1e6 / updates.max(1) as f64
        };
        let mut out: Vec<(String, f64)> =
            ["evaluator", "broker", "postgresql", "redis", "generator"]
                .iter()
                .map(|part| (part.to_string(), us(part)))
                .collect();
        let all = out.iter().map(|(_, v)| v).sum();
        // The evaluator's thread groups, the busiest first.
        let mut threads: Vec<(String, f64)> = after
            .0
            .keys()
            .filter(|k| k.starts_with("evaluator/"))
            .map(|k| (k.clone(), us(k)))
            .filter(|(_, v)| *v > 0.0)
            .collect();
        threads.sort_by(|a, b| b.1.total_cmp(&a.1));
        out.extend(threads);
        out.push(("all".into(), all));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_after_its_command_name() {
        // A name with a space and a parenthesis (the split is at the last `)`).
        let stat = "4242 (rdk:broker (1)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 \
                    12 0 5000 1000000 300 18446744073709551615";
        assert_eq!(times(stat), Some((3.0, 0.1)));
        assert_eq!(times("no name"), None);
    }

    #[test]
    fn threads_are_grouped_by_their_kind() {
        assert_eq!(group("rdk:broker12\n"), "rdk:broker");
        assert_eq!(group("tokio-runtime-w"), "tokio-runtime-w");
    }

    #[test]
    fn each_part_is_charged_per_update() {
        let before = CpuSample(BTreeMap::from([
            ("evaluator".into(), 1.0),
            ("evaluator/rdk:broker".into(), 0.5),
            ("broker".into(), 2.0),
        ]));
        let after = CpuSample(BTreeMap::from([
            ("evaluator".into(), 2.0),
            ("evaluator/rdk:broker".into(), 0.75),
            ("broker".into(), 2.5),
            ("postgresql".into(), 0.25),
        ]));
        let per = after_map(before.per_update(&after, 10_000));
        assert_eq!(per["evaluator"], 100.0);
        assert_eq!(per["evaluator/rdk:broker"], 25.0);
        assert_eq!(per["broker"], 50.0);
        assert_eq!(per["postgresql"], 25.0);
        assert_eq!(per["all"], 175.0);
    }

    fn after_map(pairs: Vec<(String, f64)>) -> BTreeMap<String, f64> {
        pairs.into_iter().collect()
    }

    #[test]
    fn this_process_is_sampled() {
        assert!(CpuSample::take().0.contains_key("generator"));
    }
}
