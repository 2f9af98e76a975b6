//! Handing freed heap memory back to the system between the steps of a command.

/// Returns the heap's free pages to the system (glibc's `malloc_trim`). Planning a
/// large scene frees about a gigabyte of shard blobs and partitions in pieces that
/// glibc keeps for reuse (past its first frees it serves them from the heap, not from
/// their own mappings), and the host runtime's tile memory, allocated next, reuses
/// none of it: kept, it stayed in the peak of `render`. Elsewhere a no-op.
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only returns free memory to the system; it takes no
        // pointer and may be called at any time.
        unsafe {
            malloc_trim(0);
        }
    }
}
