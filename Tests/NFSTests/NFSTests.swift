// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Testing

@testable import NFS

/// The parts of the nfs input plugin that need no server: `mpd`'s way of splitting a URL, its errors, and a wait
/// that ends when it is cancelled. Reading a real export is tested in conformance/test_nfs.py, which runs an NFS
/// server (nfs-ganesha) in a private network namespace.
@Suite struct NFSTests {
    @Test func splitsAsMPDDoes() throws {
        let location = try NFSLocation("nfs://host/srv/music/Artist/a.flac")
        #expect(location.server == "host" && location.export == "/srv/music/Artist" && location.path == "/a.flac")
        let upper = try NFSLocation("NFS://h/e/f")
        #expect(upper.server == "h" && upper.export == "/e" && upper.path == "/f")
    }

    /// Below a mounted export the export is the mount's, not the song's directory (`mpd`'s `nfs_check_base`).
    @Test func aMountedExportIsTheBaseOfItsSongs() throws {
        _ = try NFSExport(uri: "nfs://base-host/srv/music/")
        let location = try NFSLocation("nfs://base-host/srv/music/Artist/Album/a.flac")
        #expect(location.export == "/srv/music" && location.path == "/Artist/Album/a.flac")
        let elsewhere = try NFSLocation("nfs://other-host/srv/music/Artist/a.flac")
        #expect(elsewhere.export == "/srv/music/Artist" && elsewhere.path == "/a.flac")
        let sibling = try NFSLocation("nfs://base-host/srv/musical/a.flac")
        #expect(sibling.export == "/srv/musical" && sibling.path == "/a.flac")
        #expect(throws: NFSError.failed("Malformed nfs:// URI")) { try NFSExport(uri: "nfs://host") }
    }

    @Test(arguments: ["nfs://host", "nfs://host/", "nfs://host/file.mp3", "nfs://host/dir/", "smb://host/e/f", "nfs:/"])
    func refusesMalformedURLs(url: String) {
        #expect(throws: NFSError.failed("Malformed nfs:// URI")) { try NFSLocation(url) }
        #expect(throws: InputError.plugin(message: "Malformed nfs:// URI", uri: url)) {
            try NFSInputStream(url: url, cancellation: InputCancellation())
        }
    }

    @Test func takesTheSchemeInAnyCase() {
        #expect(NFSInputStream.canOpen("nfs://h/e/f"))
        #expect(NFSInputStream.canOpen("Nfs://h/e/f"))
        #expect(!NFSInputStream.canOpen("nfs:/h/e/f"))
        #expect(!NFSInputStream.canOpen("http://h/e/f"))
    }

    /// Nothing serves NFS on 127.0.0.1 outside the test's namespace: the mount fails in `mpd`'s words.
    @Test func aFailedMountIsWordedAsMPD() {
        do {
            _ = try NFSInputStream(url: "nfs://127.0.0.1/nowhere/a.flac", cancellation: InputCancellation())
            Issue.record("opened an export nobody serves")
        } catch {
            guard case .plugin(let message, let uri) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(message.hasPrefix("nfs_mount_async() failed: "), "\(message)")
            #expect(uri == "nfs://127.0.0.1/nowhere/a.flac")
        }
    }

    @Test func aCancelledOpenNeverWaitsOnTheServer() {
        let cancellation = InputCancellation()
        cancellation.cancel()
        #expect(throws: InputError.cancelled(uri: "nfs://127.0.0.1/e/a.flac")) {
            try NFSInputStream(url: "nfs://127.0.0.1/e/a.flac", cancellation: cancellation)
        }
    }
}
