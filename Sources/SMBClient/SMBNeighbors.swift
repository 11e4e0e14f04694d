// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Posix

/// The SMB servers `mpd`'s smbclient neighbor plugin lists (each a ``Neighbor``: `smb://NAME`, named
/// `NAME (COMMENT)`), kept as it keeps them between its browses.
public struct SMBNeighbors: Sendable, Equatable {
    /// The servers, as `listneighbors` lists them: those found by the last browse first (in the order it found
    /// them), then those known before, in their order.
    public private(set) var list: [Neighbor] = []

    public init() {}

    /// What one browse finds: the servers of `smb://`, and of each workgroup it lists (`smb://WORKGROUP`), in the
    /// order met, last first (as `mpd` gathers them); `browse` gives a listing, `failed` hears the URL and
    /// `errno` of each listing that cannot be read (`mpd` logs `smbc_opendir('URL') failed: …`).
    public static func detect(
        browse: (String) throws(Errno) -> [SMBContext.BrowseEntry], failed: (String, Errno) -> Void
    ) -> [Neighbor] {
        var found: [Neighbor] = []
        func read(_ url: String) {
            let entries: [SMBContext.BrowseEntry]
            do throws(Errno) {
                entries = try browse(url)
            } catch {
                failed(url, error)
                return
            }
            for entry in entries {
                switch entry.kind {
                case .workgroup: read("smb://" + entry.name)
                case .server:
                    found.append(Neighbor(uri: "smb://" + entry.name, name: "\(entry.name) (\(entry.comment))"))
                case .other: break
                }
            }
        }
        read("smb://")
        return found.reversed()
    }

    /// Takes the servers of a browse (`detect`'s order): those known keep their place (with the new name), those
    /// not found are lost, the new ones come first. Returns what was lost and what was found, as `mpd` tells its
    /// listener.
    public mutating func update(found: [Neighbor]) -> (lost: [Neighbor], found: [Neighbor]) {
        var remaining = found
        var kept: [Neighbor] = []
        var lost: [Neighbor] = []
        for neighbor in self.list {
            if let index = remaining.firstIndex(where: { $0.uri == neighbor.uri }) {
                kept.append(remaining.remove(at: index))
            } else {
                lost.insert(neighbor, at: 0)
            }
        }
        self.list = remaining.reversed() + kept
        return (lost, remaining)
    }
}
