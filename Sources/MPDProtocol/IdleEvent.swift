// SPDX-License-Identifier: GPL-3.0-or-later

/// An `idle` subsystem, in `mpd`'s bit order (which is also the order of `changed:` lines).
public enum IdleEvent: Int, CaseIterable, Sendable, Hashable {
    case database, storedPlaylist, playlist, player, mixer, output, options, sticker, update, subscription
    case message, neighbor, mount, partition

    /// The subsystem's name on the wire.
    public var name: String {
        switch self {
        case .database: "database"
        case .storedPlaylist: "stored_playlist"
        case .playlist: "playlist"
        case .player: "player"
        case .mixer: "mixer"
        case .output: "output"
        case .options: "options"
        case .sticker: "sticker"
        case .update: "update"
        case .subscription: "subscription"
        case .message: "message"
        case .neighbor: "neighbor"
        case .mount: "mount"
        case .partition: "partition"
        }
    }

    /// Parses a subsystem name case-insensitively, as `mpd` does.
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        guard let found = IdleEvent.allCases.first(where: { $0.name == lowered }) else { return nil }
        self = found
    }
}

/// A set of idle subsystems.
public struct IdleMask: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The mask holding one subsystem.
    public init(_ event: IdleEvent) { self.rawValue = 1 << UInt32(event.rawValue) }

    /// Every subsystem.
    public static let all = IdleMask(rawValue: (1 << UInt32(IdleEvent.allCases.count)) - 1)

    /// The subsystems held, in wire order.
    public var events: [IdleEvent] { IdleEvent.allCases.filter { self.contains(IdleMask($0)) } }
}
