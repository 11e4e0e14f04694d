// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Testing

@testable import Server

/// Which storage plugin takes a `mount` URI, in `mpd`'s order, and the checks its constructor makes.
@Suite struct StoragePluginTests {
    @Test(arguments: [
        ("smb://127.0.0.1/share", "smbclient"), ("SMB://host/share", "smbclient"), ("smb://", "smbclient"),
        ("nfs://127.0.0.1/export", "nfs"), ("Nfs://h/x", "nfs"), ("http://127.0.0.1/dav", "curl"),
        ("HTTPS://h/", "curl"),
    ])
    func recognisedURIs(uri: String, plugin: String) {
        #expect(StoragePlugin.plugin(for: uri)?.name == plugin)
    }

    @Test(arguments: ["", "file:///tmp", "/tmp", "smb:/x", "smb:", "davs://h/x", "ftp://h/", "udisks://x", "sm"])
    func unrecognisedURIs(uri: String) {
        #expect(StoragePlugin.plugin(for: uri) == nil)
    }

    @Test func nfsNeedsAnExportPath() throws {
        let nfs = try #require(StoragePlugin.plugin(for: "nfs://h/x"))
        #expect(throws: Never.self) { try nfs.check("nfs://127.0.0.1/export") }
        #expect(throws: Never.self) { try nfs.check("nfs://127.0.0.1/") }
        for malformed in ["nfs://", "nfs://127.0.0.1", "NFS://host"] {
            #expect(throws: AckError(.unknown, "Malformed nfs:// URI")) { try nfs.check(malformed) }
        }
    }
}
