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
///
/// Stored as four doubles and a bit per value that is known (33 bytes instead of four optionals' 64: a
/// database holds one per song).
public struct ReplayGainInfo: Sendable, Hashable {
    private var trackGainValue = 0.0
    private var trackPeakValue = 0.0
    private var albumGainValue = 0.0
    private var albumPeakValue = 0.0
    private var known: UInt8 = 0

    /// Track gain in dB.
    public var trackGain: Double? {
        get { self[0] }
        set { self[0] = newValue }
    }
    /// Track peak, linear (1.0 is full scale).
    public var trackPeak: Double? {
        get { self[1] }
        set { self[1] = newValue }
    }
    /// Album gain in dB.
    public var albumGain: Double? {
        get { self[2] }
        set { self[2] = newValue }
    }
    /// Album peak, linear.
    public var albumPeak: Double? {
        get { self[3] }
        set { self[3] = newValue }
    }

    private subscript(index: Int) -> Double? {
        get {
            guard self.known & (1 << index) != 0 else { return nil }
            switch index {
            case 0: return self.trackGainValue
            case 1: return self.trackPeakValue
            case 2: return self.albumGainValue
            default: return self.albumPeakValue
            }
        }
        set {
            // Unknown values are stored as 0, so equality and hashing compare what is known.
            let value = newValue ?? 0
            switch index {
            case 0: self.trackGainValue = value
            case 1: self.trackPeakValue = value
            case 2: self.albumGainValue = value
            default: self.albumPeakValue = value
            }
            if newValue == nil { self.known &= ~(1 << index) } else { self.known |= 1 << index }
        }
    }

    /// Creates a value with everything unknown.
    public init(
        trackGain: Double? = nil, trackPeak: Double? = nil, albumGain: Double? = nil, albumPeak: Double? = nil
    ) {
        self.trackGain = trackGain
        self.trackPeak = trackPeak
        self.albumGain = albumGain
        self.albumPeak = albumPeak
    }

    /// Whether nothing is known.
    public var isEmpty: Bool { self.known == 0 }
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
    /// Whether its tags hold a `CUESHEET` pair (`mpd`'s `has_playlist`): the database lists the song as a
    /// playlist too.
    public var hasPlaylist: Bool

    /// Creates an empty info.
    public init(
        tags: [TagItem] = [], durationMilliseconds: UInt64? = nil, audioFormat: AudioFormat? = nil,
        replayGain: ReplayGainInfo = ReplayGainInfo(), hasPicture: Bool = false, hasPlaylist: Bool = false
    ) {
        self.tags = tags
        self.durationMilliseconds = durationMilliseconds
        self.audioFormat = audioFormat
        self.replayGain = replayGain
        self.hasPicture = hasPicture
        self.hasPlaylist = hasPlaylist
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
