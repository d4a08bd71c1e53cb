//! `placement-api`: see the `placement` crate.

fn main() -> std::process::ExitCode {
    placement::cli::main()
}
