//! `placement-manage`: upstream's database commands (see
//! [`placement::manage`]).

fn main() -> std::process::ExitCode {
    placement::manage::main()
}
