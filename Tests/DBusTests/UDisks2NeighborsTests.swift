// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import Model
import Testing

@Suite struct UDisks2NeighborsTests {
    private static let manager = "org.freedesktop.DBus.ObjectManager"

    private func property(_ name: String, _ value: DBusValue) -> DBusValue {
        .dictEntry(.string(name), .variant(value))
    }

    /// The interfaces of a block device with `blockID` (and a drive's `driveID`), a file system when `filesystem`.
    private func interfaces(block blockID: String, drive driveID: String? = nil, filesystem: Bool = true)
        -> [DBusValue]
    {
        var interfaces: [DBusValue] = [
            .dictEntry(
                .string("org.freedesktop.UDisks2.Block"),
                .array([property("Id", .string(blockID)), property("Device", .bytes(Array("/dev/x\0".utf8)))]))
        ]
        if let driveID {
            interfaces.append(
                .dictEntry(.string("org.freedesktop.UDisks2.Drive"), .array([property("Id", .string(driveID))])))
        }
        if filesystem {
            interfaces.append(
                .dictEntry(
                    .string("org.freedesktop.UDisks2.Filesystem"), .array([property("MountPoints", .array([]))])))
        }
        return interfaces
    }

    private func added(_ path: String, _ interfaces: [DBusValue]) -> DBusIncoming {
        .signal(
            path: "/org/freedesktop/UDisks2", interface: Self.manager, member: "InterfacesAdded",
            arguments: [.objectPath(path), .array(interfaces)])
    }

    private func removed(_ path: String) -> DBusIncoming {
        .signal(
            path: "/org/freedesktop/UDisks2", interface: Self.manager, member: "InterfacesRemoved",
            arguments: [.objectPath(path), .array([.string("org.freedesktop.UDisks2.Filesystem")])])
    }

    private func listing(_ objects: [(String, [DBusValue])]) -> DBusIncoming {
        .reply(serial: 7, arguments: [.array(objects.map { .dictEntry(.objectPath($0.0), .array($0.1)) })])
    }

    @Test func theListingsFilesystemsWithAnIdAreListedByURIDescending() throws {
        var neighbors = UDisks2.Neighbors()
        let changes = try neighbors.apply(
            listing([
                ("/b/sda1", interfaces(block: "by-uuid-1111")),
                ("/drives/disk", [.dictEntry(.string("org.freedesktop.UDisks2.Drive"), .array([]))]),
                ("/b/sdb1", interfaces(block: "")),
                ("/b/sdc", interfaces(block: "by-id-c", filesystem: false)),
                ("/b/sdd1", interfaces(block: "by-uuid-2222", drive: "Maker-Stick")),
                ("/b/sde1", interfaces(block: "by-label-Z")),
            ]), listing: 7)
        #expect(changes.count == 3)
        #expect(
            neighbors.list == [
                Neighbor(uri: "udisks://by-uuid-1111", name: "/b/sda1"),
                Neighbor(uri: "udisks://by-label-Z", name: "/b/sde1"),
                // The drive's id before the block device's.
                Neighbor(uri: "udisks://Maker-Stick", name: "/b/sdd1"),
            ])
    }

    @Test func aReplyToAnotherCallOrAnotherSignalChangesNothing() throws {
        var neighbors = UDisks2.Neighbors()
        #expect(try neighbors.apply(listing([("/b/sda1", interfaces(block: "a"))]), listing: 8).isEmpty)
        let other = DBusIncoming.signal(
            path: "/org/freedesktop/UDisks2", interface: "org.freedesktop.DBus.Properties",
            member: "InterfacesAdded", arguments: [.objectPath("/b/sda1"), .array(interfaces(block: "a"))])
        #expect(try neighbors.apply(other, listing: 7).isEmpty)
        #expect(try neighbors.apply(.other, listing: 7).isEmpty)
        #expect(neighbors.list.isEmpty)
    }

    @Test func aFailedListingThrowsItsMessage() {
        var neighbors = UDisks2.Neighbors()
        #expect(throws: DBusError("The name org.freedesktop.UDisks2 was not provided by any .service files")) {
            try neighbors.apply(
                .error(serial: 7, message: "The name org.freedesktop.UDisks2 was not provided by any .service files"),
                listing: 7)
        }
        #expect(throws: DBusError("Malformed response")) {
            try neighbors.apply(.reply(serial: 7, arguments: [.string("x")]), listing: 7)
        }
    }

    @Test func addedAndRemovedObjectsComeAndGo() throws {
        var neighbors = UDisks2.Neighbors()
        _ = try neighbors.apply(listing([("/b/sda1", interfaces(block: "a"))]), listing: 7)
        #expect(try neighbors.apply(added("/b/sdz", interfaces(block: "z", filesystem: false)), listing: 7).isEmpty)
        #expect(
            try neighbors.apply(added("/b/sdz1", interfaces(block: "z1")), listing: 7) == [
                .found(Neighbor(uri: "udisks://z1", name: "/b/sdz1"))
            ])
        #expect(neighbors.list.map(\.uri) == ["udisks://z1", "udisks://a"])
        // Whichever interfaces go, the object is lost.
        #expect(
            try neighbors.apply(removed("/b/sda1"), listing: 7) == [
                .lost(Neighbor(uri: "udisks://a", name: "/b/sda1"))
            ])
        #expect(try neighbors.apply(removed("/b/sda1"), listing: 7).isEmpty)
        #expect(try neighbors.apply(removed("/b/unknown"), listing: 7).isEmpty)
        #expect(neighbors.list.map(\.uri) == ["udisks://z1"])
    }

    @Test func aSecondObjectWithTheSameIDReplacesTheFirstAndItsRemovalTakesTheURI() throws {
        var neighbors = UDisks2.Neighbors()
        _ = try neighbors.apply(listing([("/b/sda1", interfaces(block: "same"))]), listing: 7)
        _ = try neighbors.apply(added("/b/sdb1", interfaces(block: "same")), listing: 7)
        #expect(neighbors.list == [Neighbor(uri: "udisks://same", name: "/b/sdb1")])
        #expect(
            try neighbors.apply(removed("/b/sdb1"), listing: 7) == [
                .lost(Neighbor(uri: "udisks://same", name: "/b/sdb1"))
            ])
        #expect(neighbors.list.isEmpty)
        // The first object's removal finds its URI gone.
        #expect(try neighbors.apply(removed("/b/sda1"), listing: 7).isEmpty)
    }

    @Test func anObjectFoundAgainUnderAnotherIDKeepsItsFirstURIForRemoval() {
        var neighbors = UDisks2.Neighbors()
        var object = UDisks2.Object(path: "/b/sda1")
        object.blockID = "old"
        _ = neighbors.insert(object)
        object.blockID = "new"
        _ = neighbors.insert(object)
        #expect(neighbors.list.map(\.uri) == ["udisks://old", "udisks://new"])
        #expect(neighbors.remove(path: "/b/sda1") == .lost(Neighbor(uri: "udisks://old", name: "/b/sda1")))
        #expect(neighbors.list.map(\.uri) == ["udisks://new"])
    }

    @Test func malformedSignalsAreIgnored() throws {
        var neighbors = UDisks2.Neighbors()
        let noPath = DBusIncoming.signal(
            path: "/org/freedesktop/UDisks2", interface: Self.manager, member: "InterfacesAdded",
            arguments: [.string("/b/x"), .array(interfaces(block: "x"))])
        #expect(try neighbors.apply(noPath, listing: 7).isEmpty)
        let noInterfaces = DBusIncoming.signal(
            path: "/org/freedesktop/UDisks2", interface: Self.manager, member: "InterfacesRemoved",
            arguments: [.objectPath("/b/x")])
        #expect(try neighbors.apply(noInterfaces, listing: 7).isEmpty)
    }
}
