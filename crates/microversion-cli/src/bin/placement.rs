//! The `placement` command; see `microversion_cli::placement`.

use std::process::ExitCode;

fn main() -> ExitCode {
    microversion_cli::placement::run(std::env::args_os())
}
