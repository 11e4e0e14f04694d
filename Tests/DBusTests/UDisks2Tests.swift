// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import Testing

@Suite struct UDisks2Tests {
    /// One property `name` of value `value`, as `a{sv}` holds it.
    private func property(_ name: String, _ value: DBusValue) -> DBusValue {
        .dictEntry(.string(name), .variant(value))
    }

    private func interface(_ name: String, _ properties: [DBusValue]) -> DBusValue {
        .dictEntry(.string(name), .array(properties))
    }

    private func object(_ path: String, _ interfaces: [DBusValue]) -> DBusValue {
        .dictEntry(.objectPath(path), .array(interfaces))
    }

    private func mountPoints(_ paths: [String]) -> DBusValue {
        .array(paths.map { .bytes(Array($0.utf8) + [0]) })
    }

    @Test func filesystemsWithAnIdAreFound() throws {
        let reply: [DBusValue] = [
            .array([
                // A drive without a file system is left out.
                object(
                    "/org/freedesktop/UDisks2/drives/disk",
                    [interface("org.freedesktop.UDisks2.Drive", [property("Id", .string("disk"))])]),
                object(
                    "/org/freedesktop/UDisks2/block_devices/sdb1",
                    [
                        interface("org.freedesktop.UDisks2.Block", [property("Id", .string("by-uuid-1234"))]),
                        interface(
                            "org.freedesktop.UDisks2.Filesystem",
                            [property("MountPoints", mountPoints(["/media/usb", "/mnt/other"]))]),
                    ]),
                // A file system without an id is left out.
                object(
                    "/org/freedesktop/UDisks2/block_devices/sdc1",
                    [interface("org.freedesktop.UDisks2.Filesystem", [property("MountPoints", mountPoints([]))])]),
                object(
                    "/org/freedesktop/UDisks2/block_devices/sdd1",
                    [
                        interface("org.freedesktop.UDisks2.Drive", [property("Id", .string("stick"))]),
                        interface("org.freedesktop.UDisks2.Block", [property("Id", .string("by-uuid-99"))]),
                        interface("org.freedesktop.UDisks2.Filesystem", [property("MountPoints", mountPoints([]))]),
                    ]),
            ])
        ]
        let objects = try UDisks2.objects(inReply: reply)
        #expect(
            objects.map(\.path) == [
                "/org/freedesktop/UDisks2/block_devices/sdb1", "/org/freedesktop/UDisks2/block_devices/sdd1",
            ])
        #expect(objects.map(\.id) == ["by-uuid-1234", "stick"])
        #expect(objects.map(\.mountPoint) == ["/media/usb", nil])
    }

    @Test func aReplyThatIsNoArrayIsMalformed() {
        #expect(throws: DBusError("Malformed response")) { try UDisks2.objects(inReply: [.string("no")]) }
        #expect(throws: DBusError("Malformed response")) { try UDisks2.objects(inReply: []) }
    }

    @Test func propertiesOfAnotherTypeAreIgnored() throws {
        let reply: [DBusValue] = [
            .array([
                object(
                    "/o",
                    [
                        interface("org.freedesktop.UDisks2.Block", [property("Id", .other(117))]),
                        interface("org.freedesktop.UDisks2.Filesystem", []),
                    ])
            ])
        ]
        #expect(try UDisks2.objects(inReply: reply).isEmpty)
    }
}

@Suite struct DBusConnectionTests {
    /// Without a bus at the address: mpd's message, libdbus's reason. (The address is passed, not set in the
    /// environment, which other suites' tests set for buses of their own.)
    @Test func noBusIsAConnectionError() throws {
        let path = "/nonexistent-fermata-test/system_bus_socket"
        #expect(
            throws: DBusError("DBus connection error: Failed to connect to socket \(path): No such file or directory")
        ) {
            try DBusConnection(address: "unix:path=" + path)
        }
    }
}
