// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Posix
import SMBClient
import Synchronization

/// `mpd`'s smbclient neighbor plugin: the SMB servers libsmbclient's browsing finds (`smb://`, then each
/// workgroup), each a `smb://SERVER` that `mount` can name. A thread of its own browses at once, then every 10
/// seconds, as `mpd`'s does, logging each listing that fails in `mpd`'s words, and tells `changed` (on that thread)
/// when servers come or go. ``list`` never waits on the network.
final class SMBNeighborExplorer: NeighborExplorer {
    private static let intervalMilliseconds: Int32 = 10_000
    private let neighbors = Mutex(SMBNeighbors())
    private let wake: FileDescriptor
    private let thread: Mutex<NamedThread?> = Mutex(nil)

    /// Opens the plugin: a libsmbclient context (its failure is the plugin's), and the thread.
    init(logger: Logger, changed: @escaping @Sendable () -> Void) throws {
        let context = try SMBContext()
        self.wake = try EventFD.eventfd()
        self.thread.withLock {
            $0 = NamedThread("smbclient") {
                repeat {
                    let found = SMBNeighbors.detect(browse: { (url) throws(Errno) in try context.browse(url) }) {
                        url, error in
                        logger.error("smbc_opendir('\(url)') failed: \(String(cString: strerror(error.rawValue)))")
                    }
                    let (lost, new) = self.neighbors.withLock { $0.update(found: found) }
                    if !lost.isEmpty || !new.isEmpty { changed() }
                } while self.sleep()
            }
        }
    }

    /// Waits for the next browse: `false` once woken to stop.
    private func sleep() -> Bool {
        var descriptor = pollfd(fd: self.wake.rawValue, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&descriptor, 1, Self.intervalMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            return ready == 0
        }
    }

    var list: [Neighbor] { self.neighbors.withLock { $0.list } }

    /// Stops the thread (after the browse it is in, if any) and waits for it.
    func close() {
        guard let thread = self.thread.withLock({ $0.take() }) else { return }
        EventFD.signal(self.wake)
        thread.join()
        self.wake.close()
    }
}
