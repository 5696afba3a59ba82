//! The `eligibility` binary: the library's command line ([`eligibility::cli`]).

fn main() -> std::process::ExitCode {
    eligibility::cli::run()
}
