//! `placement-api`: see the `placement` crate.

fn main() -> std::process::ExitCode {
    return_large_blocks_when_freed();
    placement::cli::main()
}

/// Has glibc map every block of 128 KiB or more on its own, so that
/// freeing it gives the memory back.
///
/// By default glibc raises that threshold to the size of each large block
/// freed (up to 32 MiB), after which answers of a few hundred kilobytes
/// (allocation candidates, provider lists) come from the freeing
/// thread's arena and stay there: peak RSS under the candidate rows of
/// `scripts/bench-load.sh` went from 41 to 34 MiB (1,000 providers),
/// for about 5 % fewer requests per second on that row (the kernel
/// zeroing each new mapping; three runs of each build, alternating) and
/// none on small answers.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn return_large_blocks_when_freed() {
    const MAPPED_FROM: libc::c_int = 128 * 1024;
    // SAFETY: mallopt only changes an allocator setting, which glibc
    // allows at any time; it is called before any other thread starts.
    // A refusal (0) leaves glibc's default, which is only less frugal.
    let _ = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MAPPED_FROM) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_large_blocks_when_freed() {}
