// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Synchronization
import TestSupport
import Testing

@testable import Server

/// `listneighbors`: what `ServerOptions.neighbors` knows now, or `mpd`'s error without a neighbor plugin.
@Suite(.serialized) struct NeighborCommandTests {
    private final class Found: Sendable {
        let neighbors = Mutex<[Neighbor]>([])
    }

    @Test func listsTheNeighborsKnownAtEachCall() throws {
        let found = Found()
        let f = try QueueFixture { options in options.neighbors = { found.neighbors.withLock { $0 } } }
        #expect(f.request("listneighbors") == ["OK"])
        found.neighbors.withLock {
            $0 = [
                Neighbor(uri: "udisks://b", name: "/org/freedesktop/UDisks2/block_devices/sdb1"),
                Neighbor(uri: "udisks://a", name: "/x"),
            ]
        }
        #expect(
            f.request("listneighbors") == [
                "neighbor: udisks://b", "name: /org/freedesktop/UDisks2/block_devices/sdb1", "neighbor: udisks://a",
                "name: /x", "OK",
            ])
        #expect(f.request("commands").contains("command: listneighbors"))
        #expect(
            f.request("listneighbors x") == [
                "ACK [2@0] {listneighbors} wrong number of arguments for \"listneighbors\""
            ])
    }

    @Test func withoutANeighborPluginItIsMPDsErrorAndNotListed() throws {
        let f = try QueueFixture { _ in }
        #expect(f.request("listneighbors") == ["ACK [5@0] {listneighbors} No neighbor plugin configured"])
        #expect(!f.request("commands").contains("command: listneighbors"))
    }
}
