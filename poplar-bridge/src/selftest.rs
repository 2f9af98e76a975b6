//! C++ scenarios that exercise the Poplar API from C++ graph code (feature `selftest`).

#[cxx::bridge(namespace = "foam_selftest")]
mod ffi {
    unsafe extern "C++" {
        include!("poplar-bridge/runtime/tests/cpp/scenarios.h");
        /// Runs the named scenario; Ok carries its result summary, Err its error message.
        fn run_scenario(name: &str, threads: u32) -> Result<String>;
    }
}

/// Runs a C++ scenario from `runtime/tests/cpp/scenarios.cpp` with `threads` pool threads (0: FOAM_THREADS).
pub fn run(name: &str, threads: u32) -> crate::Result<String> {
    Ok(ffi::run_scenario(name, threads)?)
}
