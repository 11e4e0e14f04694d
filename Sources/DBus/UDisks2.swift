// SPDX-License-Identifier: GPL-3.0-or-later

/// UDisks2's names and the file systems among its managed objects, as `mpd`'s udisks storage plugin reads them.
public enum UDisks2 {
    public static let service = "org.freedesktop.UDisks2"
    public static let path = "/org/freedesktop/UDisks2"
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let filesystem = "org.freedesktop.UDisks2.Filesystem"
    /// The rule for the object manager's signals (`InterfacesAdded`, `InterfacesRemoved`), as `mpd` matches them.
    public static let signalRule =
        "type='signal',sender='\(service)',interface='\(objectManager)',path='\(path)'"

    /// A managed object with a file system: its object path, the `Id` of its drive or block interface, and the
    /// first of its `MountPoints` (`nil`: not mounted).
    public struct Object: Sendable, Equatable {
        public var path: String
        public var driveID = ""
        public var blockID = ""
        public var mountPoint: String? = nil
        var isFilesystem = false

        public init(path: String) { self.path = path }

        /// The id a `udisks://` URI names it by: the drive's, else the block device's.
        public var id: String { self.driveID.isEmpty ? self.blockID : self.driveID }
    }

    /// The file systems with an id in a `GetManagedObjects` reply (`a{oa{sa{sv}}}`), in its order; throws
    /// `Malformed response` when it is not an array.
    public static func objects(inReply reply: [DBusValue]) throws(DBusError) -> [Object] {
        guard case .array(let entries) = reply.first else { throw DBusError("Malformed response") }
        var objects: [Object] = []
        for case .dictEntry(.objectPath(let path), .array(let interfaces)) in entries {
            if let object = Self.object(path, interfaces: interfaces) { objects.append(object) }
        }
        return objects
    }

    /// The file system with an id at `path` whose interfaces (`a{sa{sv}}`) are `interfaces`; `nil` for any other
    /// object.
    public static func object(_ path: String, interfaces: [DBusValue]) -> Object? {
        var object = Object(path: path)
        for case .dictEntry(.string(let interface), .array(let properties)) in interfaces {
            Self.read(interface, properties, into: &object)
        }
        return object.isFilesystem && !object.id.isEmpty ? object : nil
    }

    private static func read(_ interface: String, _ properties: [DBusValue], into object: inout Object) {
        if interface == Self.filesystem { object.isFilesystem = true }
        for case .dictEntry(.string(let name), .variant(let value)) in properties {
            switch (interface, name, value) {
            case ("org.freedesktop.UDisks2.Drive", "Id", .string(let id)) where object.driveID.isEmpty:
                object.driveID = id
            case ("org.freedesktop.UDisks2.Block", "Id", .string(let id)) where object.blockID.isEmpty:
                object.blockID = id
            case (Self.filesystem, "MountPoints", .array(let points)) where object.mountPoint == nil:
                // The first mount point, a NUL-terminated byte string.
                if case .bytes(let bytes) = points.first, !bytes.isEmpty {
                    object.mountPoint = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                }
            default:
                break
            }
        }
    }
}
