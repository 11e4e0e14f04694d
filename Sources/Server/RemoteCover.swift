// SPDX-License-Identifier: GPL-3.0-or-later

/// A cover file beside a URL that `albumart` read whole, kept by its client for the chunks that follow (as `mpd`'s
/// `LastInputStream` keeps the cover's stream open): it serves the same directory until it has gone unused for
/// `lifetime` nanoseconds (`mpd` closes its stream after 20 s), and only covers of at most `maximumSize` bytes are
/// kept.
///
/// Pure value; the session holds it.
struct RemoteCover: Sendable, Equatable {
    /// How long a cover stays after its last use, in nanoseconds.
    static let lifetime: UInt64 = 20_000_000_000
    /// The largest cover kept whole, in bytes; larger ones are read a chunk at a time.
    static let maximumSize = 4 << 20

    /// The directory URL the cover was found in (`albumart`'s argument without its last component).
    let directory: String
    /// The cover file's bytes.
    let bytes: [UInt8]
    /// When it is dropped (nanoseconds on the server's clock) unless used again.
    private(set) var expiry: UInt64

    /// A cover read at `now`.
    init(directory: String, bytes: [UInt8], now: UInt64) {
        self.directory = directory
        self.bytes = bytes
        self.expiry = now &+ Self.lifetime
    }

    /// Whether it answers `albumart` for a song in `directory` at `now`.
    func serves(_ directory: String, now: UInt64) -> Bool { directory == self.directory && now < self.expiry }

    /// Marks it used at `now`: it stays `lifetime` longer.
    mutating func touch(now: UInt64) { self.expiry = now &+ Self.lifetime }

    /// The `count` bytes (at most) at `offset`, or `nil` when `offset` is past the end.
    func chunk(at offset: Int, count: Int) -> ArraySlice<UInt8>? {
        guard offset >= 0, offset <= self.bytes.count else { return nil }
        return self.bytes[offset..<offset + min(self.bytes.count - offset, max(0, count))]
    }
}
