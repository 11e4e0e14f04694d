// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Testing

@testable import Server

/// Which storage plugin takes a `mount` URI, in `mpd`'s order, and the checks its constructor makes.
@Suite struct StoragePluginTests {
    @Test(arguments: [
        ("smb://127.0.0.1/share", "smbclient"), ("SMB://host/share", "smbclient"), ("smb://", "smbclient"),
        ("nfs://127.0.0.1/export", "nfs"), ("Nfs://h/x", "nfs"), ("http://127.0.0.1/dav", "curl"),
        ("HTTPS://h/", "curl"), ("udisks://x", "udisks"), ("UDisks://x", "udisks"),
    ])
    func recognisedURIs(uri: String, plugin: String) {
        #expect(StoragePlugin.plugin(for: uri)?.name == plugin)
    }

    @Test(arguments: ["", "file:///tmp", "/tmp", "smb:/x", "smb:", "davs://h/x", "ftp://h/", "udisks:/x", "sm"])
    func unrecognisedURIs(uri: String) {
        #expect(StoragePlugin.plugin(for: uri) == nil)
    }

    /// mpd's udisks plugin takes the prefix in any case but makes a storage only of `udisks://` exactly.
    @Test func udisksNeedsItsPrefixInLowerCase() throws {
        let udisks = try #require(StoragePlugin.plugin(for: "udisks://x"))
        #expect(throws: Never.self) { try udisks.check("udisks://by-uuid-1/sub") }
        #expect(throws: Never.self) { try udisks.check("udisks://") }
        for other in ["UDISKS://x", "Udisks://x/y"] {
            #expect(throws: AckError(.arg, "Unrecognized storage URI")) { try udisks.check(other) }
        }
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
