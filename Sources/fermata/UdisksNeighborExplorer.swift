// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import DBus
import Model
import Posix
import Synchronization

/// `mpd`'s udisks neighbor plugin: the file systems UDisks2 has, each a `udisks://ID` that `mount` can name. Opening
/// connects to the system bus and asks for the object manager's signals (both blocking: at start-up, before the
/// loop runs), then asks for the managed objects without waiting; a thread of its own reads the reply and the
/// signals that follow (`InterfacesAdded`, `InterfacesRemoved`) and tells `changed` (on that thread) of each
/// neighbor found or lost. ``list`` never waits on the bus.
final class UdisksNeighborExplorer: NeighborExplorer {
    private let bus: DBusConnection
    private let wake: FileDescriptor
    private let neighbors = Mutex(UDisks2.Neighbors())
    private let thread: Mutex<NamedThread?> = Mutex(nil)
    private let closing = Atomic(false)

    /// Opens the plugin; throws `DBus connection error: …` (or `DBus AddMatch error: …`) as `mpd` does.
    init(logger: Logger, changed: @escaping @Sendable () -> Void) throws(DBusError) {
        let bus = try DBusConnection()
        try bus.addMatch(UDisks2.signalRule)
        let listing = try bus.send(
            destination: UDisks2.service, path: UDisks2.path, interface: UDisks2.objectManager,
            method: "GetManagedObjects")
        do {
            self.wake = try EventFD.eventfd()
        } catch {
            throw DBusError("\(error)")
        }
        self.bus = bus
        // The thread holds the explorer until `close()` ends it.
        self.thread.withLock {
            $0 = NamedThread("neighbors") {
                while let message = self.bus.receive(orWakeOn: self.wake.rawValue) {
                    do {
                        let changes = try self.neighbors.withLock { table throws(DBusError) in
                            try table.apply(message, listing: listing)
                        }
                        if !changes.isEmpty { changed() }
                    } catch {
                        logger.error("Failed to parse GetManagedObjects reply: \(error)")
                    }
                }
                if !self.closing.load(ordering: .relaxed) {
                    logger.error("lost the system bus: the neighbors listed stay as they were")
                }
            }
        }
    }

    /// The neighbors known now, as `listneighbors` lists them.
    var list: [Neighbor] { self.neighbors.withLock { $0.list } }

    /// Stops the thread and waits for it (it never waits on anything but the bus's socket and the wake-up).
    func close() {
        guard let thread = self.thread.withLock({ $0.take() }) else { return }
        self.closing.store(true, ordering: .relaxed)
        EventFD.signal(self.wake)
        thread.join()
        self.wake.close()
    }
}

/// A neighbor plugin once opened: its current list (never waiting), and `close()`, which stops it.
protocol NeighborExplorer: AnyObject, Sendable {
    var list: [Neighbor] { get }
    func close()
}

/// The configured neighbor plugins (`mpd`'s `NeighborGlue`): opened in the order of their blocks at start-up,
/// closed at exit; their lists concatenated in that order.
final class NeighborGlue: Sendable {
    private let explorers = Mutex<[any NeighborExplorer]>([])

    /// The neighbors of every plugin, for `listneighbors`.
    var list: [Neighbor] { self.explorers.withLock { $0 }.flatMap(\.list) }

    /// Opens a plugin for each supported block of `settings`; the first that fails closes those opened and throws
    /// `Failed to open neighblor plugin 'NAME'; …` (`mpd`'s words, its typo included).
    func open(_ settings: [NeighborSetting], logger: Logger, changed: @escaping @Sendable () -> Void) throws(Daemon
        .StartupError)
    {
        for setting in settings where setting.isSupported {
            let logger = logger.labelled(setting.plugin)
            do {
                let explorer: any NeighborExplorer =
                    setting.plugin == "smbclient"
                    ? try SMBNeighborExplorer(logger: logger, changed: changed)
                    : try UdisksNeighborExplorer(logger: logger, changed: changed)
                self.explorers.withLock { $0.append(explorer) }
            } catch {
                self.close()
                throw Daemon.StartupError(
                    description: "Failed to open neighblor plugin '\(setting.plugin)'; \(error)")
            }
        }
    }

    /// Stops every plugin's thread.
    func close() {
        for explorer in self.explorers.withLock({ $0 }) { explorer.close() }
        self.explorers.withLock { $0.removeAll() }
    }
}
