// SPDX-License-Identifier: GPL-3.0-or-later

/// What a neighbor plugin found (`mpd`'s `NeighborInfo`): a URI `mount` can name, and a name for people, as
/// `listneighbors` shows them.
public struct Neighbor: Sendable, Equatable {
    /// `udisks://ID`, `smb://SERVER`.
    public var uri: String
    /// The plugin's name for it.
    public var name: String

    public init(uri: String, name: String) {
        self.uri = uri
        self.name = name
    }
}
