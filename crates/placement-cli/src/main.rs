//! The `placement` command; see the `placement_cli` library.

use std::process::ExitCode;

fn main() -> ExitCode {
    placement_cli::main()
}
