// SPDX-License-Identifier: GPL-3.0-or-later

import CMPG123
import Glibc
import Input
import Model
import Posix

/// One libmpg123 decoder handle; deletes itself (and closes its stream) when released.
///
/// Thread confinement: a handle may be created on any thread (libmpg123 is initialised once, thread-safely),
/// then used from one thread at a time; it is not safe to call two methods concurrently.
/// `read(into:)` and `seek(toFrame:)` do not allocate, so the decoder thread can call them per chunk.
public final class MPG123Handle {
    /// How to set up a handle.
    public struct Options: Sendable, Hashable {
        /// `MPG123_GAPLESS`: trim the encoder delay and padding announced by a LAME/Info header (default on).
        public var gapless: Bool
        /// `MPG123_SKIP_ID3V2`: skip ID3v2 tags instead of parsing them with libmpg123's own parser.
        public var skipID3v2: Bool
        /// `MPG123_STORE_RAW_ID3`: keep the raw ID3 bytes for `rawID3v2()`.
        public var storeRawID3: Bool
        /// `MPG123_QUIET`: no messages on stderr.
        public var quiet: Bool
        /// The only output encoding to negotiate (all rates and channel counts), or `nil` for libmpg123's
        /// default (signed 16-bit).
        public var encoding: MPG123Encoding?

        /// Creates options.
        public init(
            gapless: Bool = true, skipID3v2: Bool = false, storeRawID3: Bool = false, quiet: Bool = true,
            encoding: MPG123Encoding? = nil
        ) {
            self.gapless = gapless
            self.skipID3v2 = skipID3v2
            self.storeRawID3 = storeRawID3
            self.quiet = quiet
            self.encoding = encoding
        }

        /// What `mpd` 0.23's mpg123 scan uses: library defaults (gapless on, signed 16-bit).
        public static let libraryDefaults = Options()

        /// For playback as `mpd`'s mpg123 plugin: gapless, `MPG123_SKIP_ID3V2 | MPG123_STORE_RAW_ID3` as `mpd` sets
        /// them, signed 16-bit output.
        public static let playback = Options(skipID3v2: true, storeRawID3: true, encoding: .signed16)
    }

    private let handle: OpaquePointer
    private var isOpen = false
    /// The stream `open(input:)` reads through; kept alive while libmpg123 holds a pointer to it.
    private var source: InputSource?
    private var currentFormat: MPG123OutputFormat?
    /// libmpg123 announced a new format together with data in the old one; `read(into:)` reports it next.
    private var formatChangePending = false

    /// Creates a handle with `options`; any thread.
    ///
    /// - Throws: `MPG123Error` if libmpg123 cannot create or configure the handle.
    public init(options: Options = .libraryDefaults) throws(MPG123Error) {
        try MPG123Library.ensureInitialized()
        var error: Int32 = 0
        guard let created = mpg123_new(nil, &error) else {
            throw MPG123Error(function: "mpg123_new", code: error, message: MPG123Library.plainMessage(error))
        }
        self.handle = created
        var add = 0
        var remove = 0
        func flag(_ on: Bool, _ value: mpg123_param_flags) {
            if on { add |= Int(value.rawValue) } else { remove |= Int(value.rawValue) }
        }
        flag(options.gapless, MPG123_GAPLESS)
        flag(options.skipID3v2, MPG123_SKIP_ID3V2)
        flag(options.storeRawID3, MPG123_STORE_RAW_ID3)
        flag(options.quiet, MPG123_QUIET)
        try self.check("mpg123_param2", mpg123_param2(created, Int32(MPG123_ADD_FLAGS.rawValue), add, 0))
        try self.check("mpg123_param2", mpg123_param2(created, Int32(MPG123_REMOVE_FLAGS.rawValue), remove, 0))
        if let encoding = options.encoding {
            try self.check("mpg123_format_none", mpg123_format_none(created))
            let channels = Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue)
            try self.check("mpg123_format2", mpg123_format2(created, 0, channels, Self.rawEncoding(encoding)))
        }
    }

    deinit {
        if self.isOpen { _ = mpg123_close(self.handle) }
        mpg123_delete(self.handle)
    }

    // MARK: - Opening

    /// Opens a file by path (libmpg123 does its own reads); closes any stream opened before.
    ///
    /// - Throws: `MPG123Error` from `mpg123_open`.
    public func open(path: String) throws(MPG123Error) {
        self.close()
        try self.check("mpg123_open", FileSystemCharset.withFilePath(path) { mpg123_open(self.handle, $0) })
        self.isOpen = true
    }

    /// Opens an already open file descriptor, which stays the caller's to close after `close()`.
    ///
    /// - Throws: `MPG123Error` from `mpg123_open_fd`.
    public func open(fileDescriptor: Int32) throws(MPG123Error) {
        self.close()
        try self.check("mpg123_open_fd", mpg123_open_fd(self.handle, fileDescriptor))
        self.isOpen = true
    }

    /// Opens a stream that libmpg123 reads through `input` (its replaced reader); closes any stream opened
    /// before. The handle keeps `input` until `close()`.
    ///
    /// - Throws: `MPG123Error` from `mpg123_replace_reader_handle` or `mpg123_open_handle`.
    public func open(input: any InputStream) throws(MPG123Error) {
        self.close()
        try self.check(
            "mpg123_replace_reader_handle",
            mpg123_replace_reader_handle(self.handle, inputRead, inputSeek, nil))
        let source = InputSource(input)
        self.source = source
        try self.check(
            "mpg123_open_handle", mpg123_open_handle(self.handle, Unmanaged.passUnretained(source).toOpaque()))
        self.isOpen = true
    }

    /// Closes the stream, if one is open; the handle can open another.
    public func close() {
        if self.isOpen {
            _ = mpg123_close(self.handle)
            self.isOpen = false
            self.source = nil
            self.currentFormat = nil
            self.formatChangePending = false
        }
    }

    // MARK: - Stream facts

    /// The output format; parses up to the first frame if needed (and clears the new-format flag).
    ///
    /// - Throws: `MPG123Error` from `mpg123_getformat` (no MPEG frame found, I/O error…).
    public func format() throws(MPG123Error) -> MPG123OutputFormat {
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        try self.check("mpg123_getformat", mpg123_getformat(self.handle, &rate, &channels, &encoding))
        let format = MPG123OutputFormat(
            sampleRate: rate, channels: Int(channels), encoding: Self.encoding(raw: encoding))
        self.currentFormat = format
        return format
    }

    /// The length in PCM frames (gapless-trimmed when gapless is on): from the Info header or a previous
    /// `scan()`, else libmpg123's estimate from the file size; `nil` when it cannot guess.
    public func length() -> Int64? {
        let value = mpg123_length(self.handle)
        return value >= 0 ? Int64(value) : nil
    }

    /// The length in MPEG frames, like `length()`.
    public func frameCount() -> Int64? {
        let value = mpg123_framelength(self.handle)
        return value >= 0 ? Int64(value) : nil
    }

    /// Parses every frame header of the stream (no decoding) so `length()` is exact and seeks are index
    /// jumps, then returns to the current position.
    ///
    /// - Throws: `MPG123Error` from `mpg123_scan` (for example on a non-seekable stream).
    public func scan() throws(MPG123Error) {
        try self.check("mpg123_scan", mpg123_scan(self.handle))
    }

    /// The header facts of the current frame.
    ///
    /// - Throws: `MPG123Error` from `mpg123_info2`.
    public func frameInfo() throws(MPG123Error) -> MPG123FrameInfo {
        var info = mpg123_frameinfo2()
        try self.check("mpg123_info2", mpg123_info2(self.handle, &info))
        let version: MPEGVersion =
            switch UInt32(bitPattern: info.version) {
            case MPG123_1_0.rawValue: .mpeg1
            case MPG123_2_0.rawValue: .mpeg2
            default: .mpeg25
            }
        let mode: BitRateMode =
            switch UInt32(bitPattern: info.vbr) {
            case MPG123_VBR.rawValue: .variable
            case MPG123_ABR.rawValue: .average
            default: .constant
            }
        let channels = UInt32(bitPattern: info.mode) == MPG123_M_MONO.rawValue ? 1 : 2
        return MPG123FrameInfo(
            version: version, layer: Int(info.layer), sampleRate: info.rate, channels: channels,
            frameSize: Int(info.framesize), bitRate: Int(info.bitrate), bitRateMode: mode,
            averageBitRate: Int(info.abr_rate))
    }

    /// The bit rate of the current frame in kbit/s (the frame header's rate, also for VBR and ABR streams), 0
    /// when no frame was decoded yet or it is free-format.
    ///
    /// Does not allocate. Decoder thread.
    public func currentBitRate() -> Int {
        var info = mpg123_frameinfo2()
        guard mpg123_info2(self.handle, &info) == Int32(MPG123_OK.rawValue) else { return 0 }
        return max(0, Int(info.bitrate))
    }

    /// Encoder delay and padding from the LAME/Info header, as libmpg123 read them.
    public func encoderInfo() -> MPG123EncoderInfo {
        func state(_ key: mpg123_state) -> Int? {
            var value = 0
            var floating = 0.0
            guard mpg123_getstate2(self.handle, Int32(key.rawValue), &value, &floating) == Int32(MPG123_OK.rawValue),
                value >= 0
            else { return nil }
            return value
        }
        return MPG123EncoderInfo(delay: state(MPG123_ENC_DELAY), padding: state(MPG123_ENC_PADDING))
    }

    /// The raw bytes of the last ID3v2 tag seen (needs `storeRawID3`), `nil` if none.
    public func rawID3v2() -> [UInt8]? {
        var v1: UnsafeMutablePointer<UInt8>? = nil
        var v1Size = 0
        var v2: UnsafeMutablePointer<UInt8>? = nil
        var v2Size = 0
        guard mpg123_id3_raw(self.handle, &v1, &v1Size, &v2, &v2Size) == Int32(MPG123_OK.rawValue),
            let v2, v2Size > 0
        else { return nil }
        return Array(UnsafeBufferPointer(start: v2, count: v2Size))
    }

    /// Whether libmpg123 has seen a new ID3 tag since the last `rawID3v2()`-style check (`MPG123_NEW_ID3`).
    public func hasNewID3() -> Bool {
        (mpg123_meta_check(self.handle) & Int32(MPG123_NEW_ID3)) != 0
    }

    // MARK: - Decoding

    /// Decodes into `buffer`, filling as much as fits in whole PCM frames.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: PCM frames written; 0 at the end of the stream.
    /// - Throws: `MPG123Error`; `isNewFormat` when the stream changed format, before any data in the new one
    ///   (call `format()` and go on).
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(MPG123Error) -> Int {
        if self.formatChangePending {
            // The previous call returned the last data in the old format; report the change now, before any
            // data in the new one.
            self.formatChangePending = false
            throw try self.announceNewFormat()
        }
        let frameSize: Int
        if let format = self.currentFormat {
            frameSize = format.frameSize
        } else {
            frameSize = try self.format().frameSize
        }
        let usable = buffer.count - buffer.count % max(frameSize, 1)
        guard usable > 0, let base = buffer.baseAddress else { return 0 }
        var done = 0
        let result = mpg123_read(self.handle, base, usable, &done)
        switch result {
        case Int32(MPG123_OK.rawValue), Int32(MPG123_DONE.rawValue):
            return done / frameSize
        case Int32(MPG123_NEW_FORMAT.rawValue):
            // libmpg123 may have written data in the old format before it noticed the change: that data is
            // counted in old frames, and the change is reported by the next call.
            if done > 0 {
                self.formatChangePending = true
                return done / frameSize
            }
            throw try self.announceNewFormat()
        default:
            throw self.error("mpg123_read", result)
        }
    }

    /// Reads the new format (so later reads count its frames) and returns the error that announces it.
    private func announceNewFormat() throws(MPG123Error) -> MPG123Error {
        _ = try self.format()
        let code = Int32(MPG123_NEW_FORMAT.rawValue)
        return MPG123Error(function: "mpg123_read", code: code, message: MPG123Library.plainMessage(code))
    }

    /// Seeks to a PCM frame (sample-accurate with gapless on).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: the frame the stream is now at.
    /// - Throws: `MPG123Error` from `mpg123_seek`.
    @discardableResult
    public func seek(toFrame frame: Int64) throws(MPG123Error) -> Int64 {
        let result = mpg123_seek(self.handle, off_t(frame), SEEK_SET)
        if result < 0 { throw self.error("mpg123_seek", Int32(truncatingIfNeeded: result)) }
        return Int64(result)
    }

    /// The PCM frame the next `read(into:)` starts at.
    public func tell() -> Int64 { Int64(mpg123_tell(self.handle)) }

    // MARK: - Helpers

    /// The one place return codes are checked: anything but `MPG123_OK` throws.
    private func check(_ function: String, _ result: Int32) throws(MPG123Error) {
        if result != Int32(MPG123_OK.rawValue) { throw self.error(function, result) }
    }

    private func error(_ function: String, _ result: Int32) -> MPG123Error {
        // MPG123_ERR means "see mpg123_errcode"; the handle's message then names the real cause.
        if result == Int32(MPG123_ERR.rawValue) {
            let code = mpg123_errcode(self.handle)
            let text = mpg123_strerror(self.handle).map { String(cString: $0) } ?? MPG123Library.plainMessage(code)
            return MPG123Error(function: function, code: code, message: text)
        }
        return MPG123Error(function: function, code: result, message: MPG123Library.plainMessage(result))
    }

    private static func rawEncoding(_ encoding: MPG123Encoding) -> Int32 {
        switch encoding {
        case .signed16: Int32(MPG123_ENC_SIGNED_16.rawValue)
        case .signed32: Int32(MPG123_ENC_SIGNED_32.rawValue)
        case .float32: Int32(MPG123_ENC_FLOAT_32.rawValue)
        case .other(let raw): raw
        }
    }

    private static func encoding(raw: Int32) -> MPG123Encoding {
        switch raw {
        case Int32(MPG123_ENC_SIGNED_16.rawValue): .signed16
        case Int32(MPG123_ENC_SIGNED_32.rawValue): .signed32
        case Int32(MPG123_ENC_FLOAT_32.rawValue): .float32
        default: .other(raw)
        }
    }
}

/// The input behind a handle opened with `open(input:)`: what libmpg123's reader callbacks get as their handle.
private final class InputSource {
    let input: any InputStream
    init(_ input: any InputStream) { self.input = input }
}

/// libmpg123's read callback over an `InputSource` (called on the thread that calls into the handle).
/// Does not allocate.
private let inputRead: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int) -> Int = {
    handle, buffer, count in
    guard let handle, let buffer else { return -1 }
    let source = Unmanaged<InputSource>.fromOpaque(handle).takeUnretainedValue()
    do {
        return try source.input.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: count))
    } catch {
        return -1
    }
}

/// libmpg123's seek callback over an `InputSource`: `lseek` semantics, -1 when the input cannot move there.
private let inputSeek: @convention(c) (UnsafeMutableRawPointer?, off_t, Int32) -> off_t = { handle, offset, whence in
    guard let handle else { return -1 }
    let input = Unmanaged<InputSource>.fromOpaque(handle).takeUnretainedValue().input
    let base: Int64
    switch whence {
    case SEEK_SET: base = 0
    case SEEK_CUR: base = Int64(input.offset)
    case SEEK_END:
        guard let size = input.size else { return -1 }
        base = Int64(size)
    default: return -1
    }
    let (target, overflow) = base.addingReportingOverflow(Int64(offset))
    guard !overflow, target >= 0, input.isSeekable else { return -1 }
    do {
        try input.seek(to: UInt64(target))
    } catch {
        return -1
    }
    return off_t(target)
}
