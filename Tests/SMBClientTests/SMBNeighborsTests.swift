// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Posix
import SMBClient
import Testing

@Suite struct SMBNeighborsTests {
    private typealias Entry = SMBContext.BrowseEntry

    private func neighbor(_ name: String, _ comment: String = "") -> Neighbor {
        Neighbor(uri: "smb://" + name, name: "\(name) (\(comment))")
    }

    @Test func aBrowseReadsEachWorkgroupAndKeepsServersLastFirst() {
        let listings: [String: [Entry]] = [
            "smb://": [
                Entry(kind: .workgroup, name: "WG", comment: ""), Entry(kind: .server, name: "TOP", comment: "top"),
                Entry(kind: .workgroup, name: "BROKEN", comment: ""), Entry(kind: .other, name: "share", comment: ""),
            ],
            "smb://WG": [Entry(kind: .server, name: "A", comment: "a"), Entry(kind: .server, name: "B", comment: "")],
        ]
        var failures: [String] = []
        let found = SMBNeighbors.detect(
            browse: { (url) throws(Errno) in
                guard let entries = listings[url] else { throw Errno(rawValue: 2) }
                return entries
            },
            failed: { url, error in failures.append("\(url) \(error.rawValue)") })
        #expect(found == [neighbor("TOP", "top"), neighbor("B"), neighbor("A", "a")])
        #expect(failures == ["smb://BROKEN 2"])
        var neighbors = SMBNeighbors()
        let (lost, new) = neighbors.update(found: found)
        #expect(lost.isEmpty && new.count == 3)
        // Listed in the order the browse met them.
        #expect(neighbors.list == [neighbor("A", "a"), neighbor("B"), neighbor("TOP", "top")])
    }

    @Test func aFailedRootBrowseFindsNothing() {
        var failures: [String] = []
        let found = SMBNeighbors.detect(
            browse: { (_) throws(Errno) in throw Errno(rawValue: 2) }, failed: { url, _ in failures.append(url) })
        #expect(found.isEmpty)
        #expect(failures == ["smb://"])
    }

    @Test func knownServersKeepTheirPlaceNewOnesComeFirstAndTheRestAreLost() {
        var neighbors = SMBNeighbors()
        _ = neighbors.update(found: [neighbor("C"), neighbor("B"), neighbor("A")])
        #expect(neighbors.list.map(\.uri) == ["smb://A", "smb://B", "smb://C"])
        // B goes, C's comment changes, D and E come (met as E, D: last first).
        let (lost, new) = neighbors.update(found: [neighbor("D"), neighbor("C", "new"), neighbor("E"), neighbor("A")])
        #expect(lost == [neighbor("B")])
        #expect(new == [neighbor("D"), neighbor("E")])
        #expect(neighbors.list == [neighbor("E"), neighbor("D"), neighbor("A"), neighbor("C", "new")])
        let (gone, none) = neighbors.update(found: [])
        #expect(gone.count == 4 && none.isEmpty)
        #expect(neighbors.list.isEmpty)
    }
}
