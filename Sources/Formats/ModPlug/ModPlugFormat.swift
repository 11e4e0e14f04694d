// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import ModPlug
import Model

/// Tracker modules through libmodplug, as Debian's `mpd` 0.23.12 `modplug` plugin reads them. It comes after
/// `openmpt` in `mpd`'s order, so it reads the files libopenmpt refuses and the one suffix openmpt does not
/// claim (`dfm`).
///
/// - The whole file is loaded into memory (1 byte to 100 MiB, as `mpd`'s `mod_loadfile`).
/// - Tags: `Title` from the module's name; duration: libmodplug's length. No format line, no picture, no
///   comments.
/// - Decoding: 44100 Hz, 16-bit, stereo, in reads of 4096 bytes; FIR resampling and no repeat unless the
///   `decoder` block's `resampling_mode` and `loop_count` say otherwise.
///
/// Any thread.
public struct ModPlugFormat: FormatPlugin {
    /// `modplug`.
    public var name: String { "modplug" }
    /// `mpd`'s list, in its order.
    public var suffixes: [String] {
        [
            "669", "amf", "ams", "dbm", "dfm", "dsm", "far", "it", "med", "mdl", "mod", "mtm", "mt2", "okt", "s3m",
            "stm", "ult", "umx", "xm",
        ]
    }
    /// None.
    public var mimeTypes: [String] { [] }

    /// What `mpd`'s `decoder { plugin "modplug" }` block sets (`resampling_mode`, `loop_count`).
    public let settings: ModPlugFile.Settings

    /// Creates the plugin.
    public init(settings: ModPlugFile.Settings = ModPlugFile.Settings()) { self.settings = settings }

    /// The module's title and duration.
    ///
    /// - Throws: `FormatError.notRecognized` when the file cannot be read or libmodplug cannot load it.
    public func readInfo(path: String) throws(FormatError) -> SongInfo { Self.info(try self.load(path)) }

    /// As `readInfo(path:)`, over a remote stream (`modplug_scan_stream`, the plugin's only scan): the whole
    /// stream is read into memory first, within `mpd`'s bounds.
    ///
    /// - Throws: `FormatError.notRecognized` when the stream cannot be read or libmodplug cannot load it.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        Self.info(try self.load(input: input))
    }

    private static func info(_ file: ModPlugFile) -> SongInfo {
        SongInfo(
            tags: TagCollector.tagItems([RawTagItem(.title, file.name)]),
            durationMilliseconds: UInt64(max(0, file.lengthMilliseconds)))
    }

    /// libmodplug reads no pictures.
    ///
    /// - Throws: `FormatError.notRecognized` when libmodplug cannot load the file.
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        _ = try self.load(path)
        return nil
    }

    /// `mpd`'s modplug plugin reports no name/value pairs.
    ///
    /// - Throws: `FormatError.notRecognized` when libmodplug cannot load the file.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        _ = try self.load(path)
        return []
    }

    /// A decoder of the module read whole from `input`.
    ///
    /// - Throws: `FormatError` when the stream cannot be read or libmodplug cannot load it.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        guard let file = ModPlugFile(data: try WholeStream.read(input), settings: self.settings) else {
            throw .decoder("\(input.uri): libmodplug cannot load it")
        }
        return ModPlugDecoder(file: file)
    }

    func load(_ path: String) throws(FormatError) -> ModPlugFile {
        do {
            return try self.load(input: try FileInputStream(path: path))
        } catch {
            throw .notRecognized(path: path)
        }
    }

    func load(input: any InputStream) throws(FormatError) -> ModPlugFile {
        guard let data = try? WholeStream.read(input), let file = ModPlugFile(data: data, settings: self.settings)
        else { throw .notRecognized(path: input.uri) }
        return file
    }
}

/// Renders a module as `mpd`'s modplug plugin does: reads of 4096 bytes until libmodplug renders nothing.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate.
final class ModPlugDecoder: Decoder {
    /// `44100:16:2`.
    let format = AudioFormat(sampleRate: ModPlugFile.sampleRate, sampleFormat: .s16, channels: 2)
    /// libmodplug's length.
    let totalFrames: UInt64?
    private let file: ModPlugFile
    /// `mpd`'s `MODPLUG_FRAME_SIZE`, in bytes.
    private static let chunkBytes = 4096
    private let chunk: UnsafeMutableRawBufferPointer
    private var consumed = 0
    private var pending = 0
    private var ended = false

    init(file: ModPlugFile) {
        self.file = file
        self.totalFrames = UInt64(max(0, file.lengthMilliseconds)) * UInt64(ModPlugFile.sampleRate) / 1000
        self.chunk = .allocate(byteCount: Self.chunkBytes, alignment: 4)
        self.chunk.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { self.chunk.deallocate() }

    /// Delivers rendered frames, rendering the next 4096 bytes when none are left.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end of the song.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if self.pending == 0 {
            if self.ended { return 0 }
            let read = self.file.read(into: self.chunk) / 4 * 4
            guard read > 0 else {
                self.ended = true
                return 0
            }
            self.consumed = 0
            self.pending = read
        }
        let bytes = min(self.pending, buffer.count / 4 * 4)
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: self.chunk[self.consumed..<(self.consumed + bytes)]))
        self.consumed += bytes
        self.pending -= bytes
        return bytes / 4
    }

    /// Moves to the millisecond of `frame`, dropping the rest of the chunk.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: the frame of that millisecond (the position `mpd` reports after a seek).
    @discardableResult
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        let milliseconds = frame * 1000 / UInt64(ModPlugFile.sampleRate)
        self.file.seek(milliseconds: Int(clamping: milliseconds))
        self.pending = 0
        self.ended = false
        return milliseconds * UInt64(ModPlugFile.sampleRate) / 1000
    }
}
