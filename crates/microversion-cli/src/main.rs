//! The `microversion` command; see the `microversion_cli` library.

use std::process::ExitCode;

fn main() -> ExitCode {
    match microversion_cli::run(std::env::args_os()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("microversion: error: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}
