// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Testing

/// Which input failures `mpd` reports as system errors (ACK 52).
@Suite struct InputErrorTests {
    @Test func onlySMBClientsFailedCallsAreSystemErrors() {
        #expect(InputError.plugin(message: "smbc_open() failed: Connection refused", uri: "smb://h/s/x").isSystemError)
        #expect(InputError.plugin(message: "smbc_open() failed: Connection refused", uri: "SMB://h/s/x").isSystemError)
        #expect(!InputError.plugin(message: "nfs_mount_async() failed: x", uri: "nfs://h/e/x").isSystemError)
        #expect(!InputError.plugin(message: "Connection refused", uri: "hls+http://h/x").isSystemError)
        #expect(!InputError.curl(message: "Couldn't connect to server", uri: "http://h/x").isSystemError)
        #expect(!InputError.cancelled(uri: "smb://h/s/x").isSystemError)
    }
}
