// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// One tag type across the whole database, with `mpd`'s fallbacks resolved (AlbumArtist → Artist…, or ""
/// when a song has neither): the distinct values in byte order, and for every song the numbers of its
/// values in that table. `list`, `list … group` and `count … group` work on these small integers instead
/// of strings, and since the numbers follow byte order, sorting them sorts the values.
///
/// Immutable once built; `Sendable`.
public struct TagColumn: Sendable {
    /// The distinct values, sorted by their UTF-8 bytes.
    public let values: [String]
    /// `ids[offsets[song]..<offsets[song + 1]]` are song `song`'s values, in the order `mpd` visits them
    /// (duplicates kept, as `mpd` counts them).
    private let offsets: [Int32]
    private let ids: [Int32]

    /// Resolves `type` for every song.
    init(_ type: TagType, songs: [Database.Song]) {
        var perSong: [String] = []
        var offsets: [Int32] = [0]
        offsets.reserveCapacity(songs.count + 1)
        perSong.reserveCapacity(songs.count)
        for song in songs {
            song.info.visitWithFallbackOrEmpty(type) { perSong.append($0) }
            offsets.append(Int32(perSong.count))
        }
        // Keyed by bytes: Swift's `String` equality merges canonically equivalent text (a Kelvin sign and a
        // K), which mpd lists as two values.
        let values = Set(perSong.lazy.map(ByteString.init)).map(\.text).sorted {
            $0.utf8.lexicographicallyPrecedes($1.utf8)
        }
        var number: [ByteString: Int32] = [:]
        number.reserveCapacity(values.count)
        for (index, value) in values.enumerated() { number[ByteString(value)] = Int32(index) }
        self.values = values
        self.offsets = offsets
        self.ids = perSong.map { number[ByteString($0)]! }
    }

    /// The value numbers of song `song`.
    @inline(__always)
    public func ids(of song: Int32) -> ArraySlice<Int32> {
        self.ids[Int(self.offsets[Int(song)])..<Int(self.offsets[Int(song) + 1])]
    }

    /// Calls `body` with the value numbers of every song without slicing per song: song `song`'s are
    /// `ids[offsets[song]..<offsets[song + 1]]`.
    public func withUnsafeIDs<Result>(
        _ body: (_ offsets: UnsafeBufferPointer<Int32>, _ ids: UnsafeBufferPointer<Int32>) -> Result
    ) -> Result {
        self.offsets.withUnsafeBufferPointer { offsets in self.ids.withUnsafeBufferPointer { body(offsets, $0) } }
    }
}

/// A string compared and hashed by its UTF-8 bytes, as `mpd` compares tag values.
struct ByteString: Hashable {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }

    func hash(into hasher: inout Hasher) {
        var text = self.text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
