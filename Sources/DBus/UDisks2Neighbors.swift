// SPDX-License-Identifier: GPL-3.0-or-later

import Model

extension UDisks2 {
    /// What changed with a message from UDisks2.
    public enum NeighborChange: Sendable, Equatable {
        case found(Neighbor)
        case lost(Neighbor)
    }

    /// The file systems UDisks2 has (each a ``Neighbor``: `udisks://ID`, named by its object's path on the bus), kept as `mpd`'s udisks neighbor plugin keeps them: by URI (one neighbor per id,
    /// the last object found with it) and by object path (an object keeps the URI it was first found with, and its
    /// removal takes that URI's neighbor away, whichever object it names now).
    public struct Neighbors: Sendable, Equatable {
        private var byURI: [String: Neighbor] = [:]
        private var uriByPath: [String: String] = [:]

        public init() {}

        /// The neighbors, as `listneighbors` lists them: by URI, descending, byte-wise.
        public var list: [Neighbor] {
            self.byURI.values.sorted { $1.uri.utf8.lexicographicallyPrecedes($0.uri.utf8) }
        }

        /// Adds the file system `object`; always a change, heard as `neighbor` by idle clients.
        public mutating func insert(_ object: Object) -> NeighborChange {
            let uri = "udisks://" + object.id
            let neighbor = Neighbor(uri: uri, name: object.path)
            self.byURI[uri] = neighbor
            if self.uriByPath[object.path] == nil { self.uriByPath[object.path] = uri }
            return .found(neighbor)
        }

        /// Removes the object at `path`: the neighbor it was found as, if any.
        public mutating func remove(path: String) -> NeighborChange? {
            guard let uri = self.uriByPath.removeValue(forKey: path) else { return nil }
            guard let neighbor = self.byURI.removeValue(forKey: uri) else { return nil }
            return .lost(neighbor)
        }

        /// What `message` (from the connection that matched ``signalRule``) changes, in order: each file system of
        /// a `GetManagedObjects` reply with the serial `listing`, the object of an `InterfacesAdded` signal when it
        /// is one, the object an `InterfacesRemoved` signal names (whichever interfaces it lists). A failed listing
        /// throws its error (`Failed to parse GetManagedObjects reply: …` is what `mpd` logs).
        public mutating func apply(_ message: DBusIncoming, listing: UInt32) throws(DBusError) -> [NeighborChange] {
            switch message {
            case .reply(listing, let arguments):
                return try UDisks2.objects(inReply: arguments).map { self.insert($0) }
            case .error(listing, let message):
                throw DBusError(message)
            case .signal(UDisks2.path, UDisks2.objectManager, "InterfacesAdded", let arguments):
                guard arguments.count == 2, case .objectPath(let path) = arguments[0],
                    case .array(let interfaces) = arguments[1],
                    let object = UDisks2.object(path, interfaces: interfaces)
                else { return [] }
                return [self.insert(object)]
            case .signal(UDisks2.path, UDisks2.objectManager, "InterfacesRemoved", let arguments):
                guard arguments.count == 2, case .objectPath(let path) = arguments[0], case .array = arguments[1] else {
                    return []
                }
                return self.remove(path: path).map { [$0] } ?? []
            default:
                return []
            }
        }
    }
}
