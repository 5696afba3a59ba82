//! The `eligibility` binary: the library's command line ([`eligibility::cli`]).

/// mimalloc rather than the system allocator: the evaluator allocates and frees a batch's
/// states and events every few milliseconds on several threads (docs/fleet.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // The compute pool's threads by a name of their own (each would otherwise take the name of
    // the thread that first used the pool, often an async runtime's): a profile, and the fleet
    // bench's CPU per update, tell the passes from the runtime (docs/performance.md).
    let _ = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("compute-{i}"))
        .build_global();
    eligibility::cli::run()
}
