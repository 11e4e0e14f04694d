// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// Gives the heap's free pages back to the system: after a large build (a database snapshot) whose
/// temporary allocations are freed, the allocator otherwise keeps them, and the server's resident size
/// with them. The corresponding C function is `malloc_trim`.
///
/// Any thread; takes a moment on a large heap.
public func releaseFreeMemory() { _ = malloc_trim(0) }
