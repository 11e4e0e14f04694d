// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol

/// The commands Fermata implements, sorted by name as `commands` lists them.
///
/// Only implemented commands are here, so `commands` stays truthful: clients such as M.A.L.P., myMPD
/// and Home Assistant switch features on by what it lists.
public struct CommandTable: Sendable {
    /// The entries, sorted by name.
    public let entries: [Command]
    private let byName: [String: Int]

    /// Builds a table; entries are sorted by name and must be unique.
    init(_ entries: [Command]) {
        let sorted = entries.sorted { $0.name < $1.name }
        self.entries = sorted
        self.byName = Dictionary(uniqueKeysWithValues: sorted.enumerated().map { ($1.name, $0) })
    }

    /// The command called `name` (exact, case-sensitive), if implemented.
    public func lookup(_ name: String) -> Command? {
        self.byName[name].map { self.entries[$0] }
    }

    /// Every command Fermata implements.
    public static let standard = CommandTable(
        ConnectionCommands.all + MessageCommands.all + StatusCommands.all + DatabaseCommands.all
            + SearchCommands.all + ArtCommands.all + StickerCommands.all + PlaylistCommands.all
            + QueueCommands.all + PlaybackCommands.all + OutputCommands.all + StorageCommands.all
            + FingerprintCommands.all + PartitionCommands.all)
}
