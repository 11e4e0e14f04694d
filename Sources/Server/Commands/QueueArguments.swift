// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Model
import Playback

/// `mpd`'s `RangeArg`: START and END (excluded), END `nil` when open-ended (`N:` or `-1`).
struct QueueRange {
    var start: Int
    var end: Int?

    /// Everything (`-1`, or no argument).
    static let all = QueueRange(start: 0, end: nil)

    /// Parses `N`, `N:M`, `N:` or `-1` with `mpd`'s errors.
    static func parse(_ text: String) throws(AckError) -> QueueRange {
        let window = try WindowRange.parse(text)
        return QueueRange(start: window.start, end: window.end)
    }

    /// `CheckClip`: the range within a queue of `count` songs.
    ///
    /// - Throws: `Bad song index` when START is past the end.
    func clipped(to count: Int) throws(AckError) -> Range<Int> {
        guard self.start <= count else { throw PlaylistError.badSongIndex.ack }
        let end = min(self.end ?? count, count)
        return self.start..<max(self.start, end)
    }
}

extension PlaylistError {
    /// The `ACK` for this error, with `mpd`'s code.
    var ack: AckError {
        let code: AckCode =
            switch self.kind {
            case .badRange: .arg
            case .noSuchSong: .noExist
            case .notPlaying: .playerSync
            case .tooLarge: .playlistMax
            case .denied: .permission
            case .player: .unknown
            }
        return AckError(code, self.message)
    }
}

/// Runs a playlist operation, turning its error into an `ACK`.
@discardableResult
func playlistAction<T>(_ body: () throws(PlaylistError) -> T) throws(AckError) -> T {
    do {
        return try body()
    } catch {
        throw error.ack
    }
}

enum QueueArguments {
    /// The current song's position, or `No current song` (55).
    private static func currentPosition(_ playlist: Playlist) throws(AckError) -> Int {
        guard let position = playlist.currentPosition else { throw AckError(.playerSync, "No current song") }
        return position
    }

    /// An insert position (`add`, `addid`, `findadd … position`): `N`, `+N` after the current song, `-N` before
    /// it, each within the queue.
    static func insertPosition(_ text: String, playlist: Playlist) throws(AckError) -> Int {
        let length = playlist.queue.count
        if text.hasPrefix("+") {
            let current = try self.currentPosition(playlist)
            let offset = try ArgumentParser.unsigned(String(text.dropFirst()), maximum: UInt64(length - current - 1))
            return current + 1 + Int(offset)
        }
        if text.hasPrefix("-") {
            let current = try self.currentPosition(playlist)
            return current - Int(try ArgumentParser.unsigned(String(text.dropFirst()), maximum: UInt64(current)))
        }
        return Int(try ArgumentParser.unsigned(text, maximum: UInt64(length)))
    }

    /// A `move` destination for `range`: absolute within what is left once the range is taken out, or relative to
    /// the current song's position after that (`mpd`'s bounds, including its `-N` bound, kept as they are).
    static func moveDestination(_ text: String, range: Range<Int>, playlist: Playlist) throws(AckError) -> Int {
        let length = playlist.queue.count
        if text.hasPrefix("+") || text.hasPrefix("-") {
            var current = try self.currentPosition(playlist)
            if range.contains(current) {
                throw AckError(.arg, "Cannot move current song relative to itself")
            }
            if current >= range.upperBound { current -= range.count }
            // mpd computes the bound in unsigned arithmetic: a negative bound wraps to a huge one.
            let bound = length - current - range.count
            let maximum = bound < 0 ? UInt64(UInt32.max) : UInt64(bound)
            let offset = Int(try ArgumentParser.unsigned(String(text.dropFirst()), maximum: maximum))
            return text.hasPrefix("+") ? current + 1 + offset : current - offset
        }
        let bound = length - range.count
        return Int(try ArgumentParser.unsigned(text, maximum: bound < 0 ? UInt64(UInt32.max) : UInt64(bound)))
    }

    /// A song time (`seek`, `seekid`): a C float, not negative.
    static func songTime(_ text: String) throws(AckError) -> Double {
        let value = try self.float(text)
        if value < 0 { throw AckError(.arg, "Negative value not allowed: \(text)") }
        return value
    }

    /// A C `float` (`strtof`), so values carry single precision as in `mpd`.
    static func float(_ text: String) throws(AckError) -> Double {
        Double(Float(try ArgumentParser.float(text)))
    }
}
