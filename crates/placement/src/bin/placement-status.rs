//! `placement-status`: upstream's upgrade checks (see
//! [`placement::status`]).

fn main() -> std::process::ExitCode {
    placement::status::main()
}
