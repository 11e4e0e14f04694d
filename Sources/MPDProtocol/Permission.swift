// SPDX-License-Identifier: GPL-3.0-or-later

/// Client permissions, with `mpd`'s bit values.
public struct Permission: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `read`: browse and query.
    public static let read = Permission(rawValue: 1)
    /// `add`: add to the queue.
    public static let add = Permission(rawValue: 2)
    /// `control`: stored playlists, updates, messages.
    public static let control = Permission(rawValue: 4)
    /// `admin`: outputs, partitions, stickers, `kill`.
    public static let admin = Permission(rawValue: 8)
    /// `player`: playback and queue editing.
    public static let player = Permission(rawValue: 16)

    /// Every permission: what clients get when no password is configured.
    public static let all: Permission = [.read, .add, .control, .admin, .player]

    /// Parses a comma-separated list such as `read,add,control`, as `mpd.conf` writes them.
    ///
    /// `control` implies `player`, for compatibility with `mpd` 0.22 and older configurations.
    /// - Returns: `nil` when a name is unknown.
    public init?(parsingList text: String) {
        var result: Permission = []
        for part in text.split(separator: ",", omittingEmptySubsequences: true) {
            switch part.trimmingSpaces() {
            case "read": result.insert(.read)
            case "add": result.insert(.add)
            case "control": result.insert([.control, .player])
            case "admin": result.insert(.admin)
            case "player": result.insert(.player)
            default: return nil
            }
        }
        self = result
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var result = self
        while result.first == " " || result.first == "\t" { result = result.dropFirst() }
        while result.last == " " || result.last == "\t" { result = result.dropLast() }
        return result
    }
}
