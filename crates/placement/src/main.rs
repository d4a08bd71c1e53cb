//! `placement-api`: see the `placement` crate.

/// jemalloc rather than glibc's malloc: its background thread returns the
/// pages a burst of requests freed within about a second (the settings are
/// in `.cargo/config.toml`; `_RJEM_MALLOC_CONF` overrides them at start),
/// where glibc keeps them in each thread's arena until a later request
/// reuses them ("Memory" in BENCHMARKS.md).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    placement::cli::main()
}
