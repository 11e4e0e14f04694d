// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// Gives the heap's free pages back to the system: after a large build (a database snapshot) whose
/// temporary allocations are freed, the allocator otherwise keeps them, and the server's resident size
/// with them. The corresponding C function is `malloc_trim`.
///
/// Any thread; takes a moment on a large heap.
public func releaseFreeMemory() { _ = malloc_trim(0) }

/// Asks the processor to bring the memory at `address` into its cache for a coming read, without waiting for it
/// (a hint: nothing happens for an address that is not mapped). For walks whose next addresses are known ahead and
/// scattered over more memory than the cache holds (the song blocks of a query's answer). The corresponding C
/// function is GCC's `__builtin_prefetch`.
@inlinable @inline(__always)
public func prefetch(_ address: UnsafeRawPointer) { fermata_prefetch(address) }

/// Fixes glibc's thresholds for returning memory to the system and its number of heaps, unless the environment
/// chose them (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`, `MALLOC_ARENA_MAX`, or `GLIBC_TUNABLES`): blocks of
/// 1 MiB and more get pages of their own, given back when freed; a heap keeps at most 2 MiB free at its top; and the
/// threads share two heaps.
///
/// glibc otherwise raises both thresholds each time a large block it mapped is freed (up to 32 MiB and 64 MiB).
/// Loading `mpd`'s text database frees tens of MiB of such temporaries; afterwards the snapshot and the binary copy
/// written from it came from heaps that kept 45 MiB free for good (75 MiB of anonymous memory for 100k songs,
/// against 30 MiB when the same library is loaded from the binary copy; `malloc_trim` did not return it).
///
/// glibc also gives threads heaps of their own, up to eight per processor: a scan's threads (the walk, the tag
/// readers, the update thread that builds the database) each left pages partly used in theirs, and the database
/// spread over them. Two heaps, the loop's and one the others share, left 44.7–45.4 MiB resident after a 100k-song
/// scan where glibc's default left 44.7–47.9 (medians 45.0 and 47.2), for a scan 0.1–0.2 s longer (3.6–3.8 against
/// 3.4–3.7 s); one heap for all made the scan 1–2 s longer.
///
/// Call first thing in `main`, before any thread starts. The corresponding C function is `mallopt`.
public func configureAllocator() {
    let names = ["MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_ARENA_MAX", "GLIBC_TUNABLES"]
    for name in names where getenv(name) != nil { return }
    _ = mallopt(M_MMAP_THRESHOLD, 1 << 20)
    _ = mallopt(M_TRIM_THRESHOLD, 2 << 20)
    _ = mallopt(M_ARENA_MAX, 2)
}
