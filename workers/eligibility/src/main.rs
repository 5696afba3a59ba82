//! The `eligibility` binary: the library's command line ([`eligibility::cli`]).

/// mimalloc rather than the system allocator: the evaluator allocates and frees a batch's
/// states and events every few milliseconds on several threads (docs/fleet.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    eligibility::cli::run()
}
