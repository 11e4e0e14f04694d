// SPDX-License-Identifier: GPL-3.0-or-later

import CSndfile
import Glibc
import Input

/// A failed libsndfile call: which function and libsndfile's message.
public struct SndfileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The libsndfile function that failed (`sf_open_virtual`, `sf_seek`…).
    public let function: String
    /// libsndfile's text (`sf_strerror`).
    public let message: String

    /// Creates an error; used by the wrapper and by tests.
    public init(function: String, message: String) {
        self.function = function
        self.message = message
    }

    /// `function: message`.
    public var description: String { "\(self.function): \(self.message)" }
}

/// How the samples of a sound file are encoded (libsndfile's `SF_FORMAT_SUBMASK` part of the format).
public enum SndfileEncoding: Sendable, Hashable {
    /// Signed 8-bit integers.
    case pcmS8
    /// Unsigned 8-bit integers.
    case pcmU8
    /// 16-bit integers.
    case pcm16
    /// 24-bit integers.
    case pcm24
    /// 32-bit integers.
    case pcm32
    /// 32-bit floats.
    case float
    /// 64-bit floats.
    case double
    /// Anything else (µ-law, A-law, ADPCM, GSM…): the raw `SF_FORMAT_*` subtype.
    case other(Int32)

    init(subtype: Int32) {
        switch subtype {
        case Int32(SF_FORMAT_PCM_S8): self = .pcmS8
        case Int32(SF_FORMAT_PCM_U8): self = .pcmU8
        case Int32(SF_FORMAT_PCM_16): self = .pcm16
        case Int32(SF_FORMAT_PCM_24): self = .pcm24
        case Int32(SF_FORMAT_PCM_32): self = .pcm32
        case Int32(SF_FORMAT_FLOAT): self = .float
        case Int32(SF_FORMAT_DOUBLE): self = .double
        default: self = .other(subtype)
        }
    }
}

/// The text fields libsndfile reads from a file's metadata (`SF_STR_*`: RIFF `INFO`, AIFF `NAME`…).
public enum SndfileStringField: Sendable, Hashable, CaseIterable {
    /// `SF_STR_TITLE` (RIFF `INAM`, AIFF `NAME`).
    case title
    /// `SF_STR_COPYRIGHT` (`ICOP`, `(c) `).
    case copyright
    /// `SF_STR_SOFTWARE` (`ISFT`).
    case software
    /// `SF_STR_ARTIST` (`IART`, `AUTH`).
    case artist
    /// `SF_STR_COMMENT` (`ICMT`, `ANNO`).
    case comment
    /// `SF_STR_DATE` (`ICRD`).
    case date
    /// `SF_STR_ALBUM` (`IPRD`).
    case album
    /// `SF_STR_LICENSE`.
    case license
    /// `SF_STR_TRACKNUMBER` (`ITRK`).
    case trackNumber
    /// `SF_STR_GENRE` (`IGNR`).
    case genre

    var raw: Int32 {
        switch self {
        case .title: Int32(SF_STR_TITLE)
        case .copyright: Int32(SF_STR_COPYRIGHT)
        case .software: Int32(SF_STR_SOFTWARE)
        case .artist: Int32(SF_STR_ARTIST)
        case .comment: Int32(SF_STR_COMMENT)
        case .date: Int32(SF_STR_DATE)
        case .album: Int32(SF_STR_ALBUM)
        case .license: Int32(SF_STR_LICENSE)
        case .trackNumber: Int32(SF_STR_TRACKNUMBER)
        case .genre: Int32(SF_STR_GENRE)
        }
    }
}

/// One sound file opened for reading through libsndfile's virtual I/O over an `InputStream`; closes itself.
///
/// Thread confinement: create it on any thread, then use it from one thread at a time. The `read…` methods
/// and `seek(toFrame:)` do not allocate, so the decoder thread can call them per chunk.
public final class SndfileHandle {
    /// PCM frames in the file (as its header and size say; 0 or more).
    public let frames: Int64
    /// Frames per second.
    public let sampleRate: Int
    /// Interleaved channels.
    public let channels: Int
    /// How the samples are stored.
    public let encoding: SndfileEncoding
    /// Whether libsndfile can seek in it.
    public let isSeekable: Bool

    private let file: OpaquePointer
    /// The stream libsndfile reads through; retained here while libsndfile holds a pointer to it.
    private let source: SndfileSource

    /// Opens the sound file that `input` holds from its current offset (libsndfile reads through `input`,
    /// which the handle keeps).
    ///
    /// - Throws: `SndfileError` when libsndfile does not recognise the stream.
    public init(input: any InputStream) throws(SndfileError) {
        self.source = SndfileSource(input)
        var info = SF_INFO()
        var io = SF_VIRTUAL_IO(
            get_filelen: sndfileLength, seek: sndfileSeek, read: sndfileRead, write: sndfileWrite,
            tell: sndfileTell)
        // Unmanaged: libsndfile keeps a plain pointer to the source; `self.source` keeps it alive.
        let userData = Unmanaged.passUnretained(self.source).toOpaque()
        guard let file = sf_open_virtual(&io, Int32(SFM_READ), &info, userData) else {
            throw SndfileError(function: "sf_open_virtual", message: String(cString: sf_strerror(nil)))
        }
        self.file = file
        self.frames = max(0, info.frames)
        self.sampleRate = Int(info.samplerate)
        self.channels = Int(info.channels)
        self.encoding = SndfileEncoding(subtype: info.format & Int32(SF_FORMAT_SUBMASK))
        self.isSeekable = info.seekable != 0
    }

    deinit { sf_close(self.file) }

    /// The file's text field `field`, as the bytes libsndfile holds (not checked as UTF-8), or `nil`.
    public func string(_ field: SndfileStringField) -> [UInt8]? {
        guard let value = sf_get_string(self.file, field.raw) else { return nil }
        // Unsafe: libsndfile's NUL-terminated string, valid until the next call on the handle; copied at once.
        return Array(
            UnsafeBufferPointer(
                start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: strlen(value)))
    }

    /// Reads whole frames as 16-bit samples (`sf_readf_short`: other encodings are scaled to 16 bits).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames read (fewer than fit only at the end or on an error; 0 at the end).
    public func readFrames(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        let frames = buffer.count / max(self.channels, 1)
        guard frames > 0, let base = buffer.baseAddress else { return 0 }
        return Int(max(0, sf_readf_short(self.file, base, sf_count_t(frames))))
    }

    /// Reads whole frames as 32-bit samples (`sf_readf_int`: other encodings are scaled to 32 bits).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames read; 0 at the end.
    public func readFrames(into buffer: UnsafeMutableBufferPointer<Int32>) -> Int {
        let frames = buffer.count / max(self.channels, 1)
        guard frames > 0, let base = buffer.baseAddress else { return 0 }
        return Int(max(0, sf_readf_int(self.file, base, sf_count_t(frames))))
    }

    /// Reads whole frames as 32-bit floats (`sf_readf_float`: integers are normalised to ±1.0).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames read; 0 at the end.
    public func readFrames(into buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        let frames = buffer.count / max(self.channels, 1)
        guard frames > 0, let base = buffer.baseAddress else { return 0 }
        return Int(max(0, sf_readf_float(self.file, base, sf_count_t(frames))))
    }

    /// Moves to `frame` (sample-accurate).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: the frame now reached.
    /// - Throws: `SndfileError` from `sf_seek` (past the end, or the stream cannot seek).
    @discardableResult
    public func seek(toFrame frame: Int64) throws(SndfileError) -> Int64 {
        let result = sf_seek(self.file, sf_count_t(frame), SEEK_SET)
        guard result >= 0 else {
            throw SndfileError(function: "sf_seek", message: String(cString: sf_strerror(self.file)))
        }
        return Int64(result)
    }
}

/// The input behind a handle: what libsndfile's virtual I/O callbacks get as their user data.
private final class SndfileSource {
    let input: any InputStream
    /// Where libsndfile moved past the end of the stream, which `lseek` (and so `mpd`'s file input) allows:
    /// reads there return nothing. `nil` while inside the stream.
    var beyondEnd: Int64?
    init(_ input: any InputStream) { self.input = input }

    /// The offset libsndfile sees.
    var offset: Int64 { self.beyondEnd ?? Int64(self.input.offset) }
}

private func sndfileSource(_ userData: UnsafeMutableRawPointer?) -> SndfileSource? {
    guard let userData else { return nil }
    return Unmanaged<SndfileSource>.fromOpaque(userData).takeUnretainedValue()
}

/// The stream's size, or -1 when unknown.
private let sndfileLength: @convention(c) (UnsafeMutableRawPointer?) -> sf_count_t = { userData in
    guard let size = sndfileSource(userData)?.input.size, size <= UInt64(Int64.max) else { return -1 }
    return sf_count_t(size)
}

/// `lseek` semantics over the stream (also past its end); -1 when it cannot move there.
private let sndfileSeek: @convention(c) (sf_count_t, Int32, UnsafeMutableRawPointer?) -> sf_count_t = {
    offset, whence, userData in
    guard let source = sndfileSource(userData) else { return -1 }
    let input = source.input
    let base: Int64
    switch whence {
    case SEEK_SET: base = 0
    case SEEK_CUR: base = source.offset
    case SEEK_END:
        guard let size = input.size else { return -1 }
        base = Int64(size)
    default: return -1
    }
    let (target, overflow) = base.addingReportingOverflow(offset)
    guard !overflow, target >= 0 else { return -1 }
    if target == source.offset { return target }
    guard input.isSeekable else { return -1 }
    if let size = input.size, UInt64(target) > size {
        source.beyondEnd = target
        return target
    }
    do {
        try input.seek(to: UInt64(target))
    } catch {
        return -1
    }
    source.beyondEnd = nil
    return sf_count_t(input.offset)
}

/// Full reads (libsndfile takes a short read for the end of the file, as `mpd` notes); does not allocate.
private let sndfileRead: @convention(c) (UnsafeMutableRawPointer?, sf_count_t, UnsafeMutableRawPointer?) -> sf_count_t =
    {
        buffer, count, userData in
        guard let source = sndfileSource(userData), source.beyondEnd == nil, let buffer, count > 0 else { return 0 }
        do {
            return sf_count_t(
                try source.input.readFully(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(count))))
        } catch {
            return 0
        }
    }

/// Writing is never used (files are opened read-only).
private let sndfileWrite: @convention(c) (UnsafeRawPointer?, sf_count_t, UnsafeMutableRawPointer?) -> sf_count_t = {
    _, _, _ in -1
}

/// The stream's offset.
private let sndfileTell: @convention(c) (UnsafeMutableRawPointer?) -> sf_count_t = { userData in
    sndfileSource(userData)?.offset ?? -1
}
