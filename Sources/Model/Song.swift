// SPDX-License-Identifier: GPL-3.0-or-later

/// One tag item: a type and a value, single-line UTF-8.
public struct TagItem: Sendable, Hashable {
    /// The tag type.
    public var type: TagType
    /// The value.
    public var value: String

    /// Creates an item.
    public init(_ type: TagType, _ value: String) {
        self.type = type
        self.value = value
    }
}

/// ReplayGain values of a song, kept for playback.
public struct ReplayGainInfo: Sendable, Hashable {
    /// Track gain in dB.
    public var trackGain: Double?
    /// Track peak, linear (1.0 is full scale).
    public var trackPeak: Double?
    /// Album gain in dB.
    public var albumGain: Double?
    /// Album peak, linear.
    public var albumPeak: Double?

    /// Creates a value with everything unknown.
    public init(trackGain: Double? = nil, trackPeak: Double? = nil, albumGain: Double? = nil, albumPeak: Double? = nil) {
        self.trackGain = trackGain
        self.trackPeak = trackPeak
        self.albumGain = albumGain
        self.albumPeak = albumPeak
    }

    /// Whether nothing is known.
    public var isEmpty: Bool {
        self.trackGain == nil && self.trackPeak == nil && self.albumGain == nil && self.albumPeak == nil
    }
}

/// What a format plugin reads from a file: its tags, length, format and ReplayGain.
public struct SongInfo: Sendable, Hashable {
    /// Tag items in the order the file stores them (multi-valued tags repeat).
    public var tags: [TagItem]
    /// The exact length in milliseconds, if known.
    public var durationMilliseconds: UInt64?
    /// The decoded audio format, if known.
    public var audioFormat: AudioFormat?
    /// ReplayGain values from the tags.
    public var replayGain: ReplayGainInfo
    /// Whether the file has an embedded picture (for `readpicture`).
    public var hasPicture: Bool

    /// Creates an empty info.
    public init(
        tags: [TagItem] = [], durationMilliseconds: UInt64? = nil, audioFormat: AudioFormat? = nil,
        replayGain: ReplayGainInfo = ReplayGainInfo(), hasPicture: Bool = false
    ) {
        self.tags = tags
        self.durationMilliseconds = durationMilliseconds
        self.audioFormat = audioFormat
        self.replayGain = replayGain
        self.hasPicture = hasPicture
    }

    /// The values of one tag type, in stored order.
    public func values(_ type: TagType) -> [String] { self.tags.filter { $0.type == type }.map(\.value) }

    /// The first value of one tag type, or `nil` (`mpd`'s `Tag::GetValue`).
    public func firstValue(_ type: TagType) -> String? { self.tags.first(where: { $0.type == type })?.value }
}

/// An embedded picture: its bytes and MIME type, if known.
public struct Picture: Sendable, Hashable {
    /// The image bytes.
    public var data: [UInt8]
    /// `image/jpeg`, `image/png`… or `nil` when the file does not say.
    public var mimeType: String?

    /// Creates a picture.
    public init(data: [UInt8], mimeType: String?) {
        self.data = data
        self.mimeType = mimeType
    }
}
