// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import Model
import OpenMPT

/// Tracker modules (MOD, S3M, XM, IT, MPTM and the rest of libopenmpt's formats) as Debian's `mpd` 0.23.12
/// `openmpt` plugin reads them (libopenmpt 0.6).
///
/// - The whole file is loaded into memory (1 byte to 100 MiB, as `mpd`'s `mod_loadfile`).
/// - Tags: `Title`, `Artist`, `Comment` (the module's message), `Date` and `Performer` (the tracker that
///   wrote it) from libopenmpt's metadata. Duration: libopenmpt's, truncated to the millisecond. No format
///   line, no picture, no comments.
/// - Decoding: 48000 Hz, 32-bit float, stereo, in chunks of 512 frames, with `mpd`'s render settings: by
///   default play once, 100 % stereo separation, default interpolation and volume ramping,
///   sample-synchronised seeking, Amiga resampler emulation; a `decoder { plugin "openmpt" }` block changes
///   them (``Options``).
///
/// Any thread.
public struct OpenMPTFormat: FormatPlugin {
    /// `openmpt`.
    public var name: String { "openmpt" }
    /// `mpd`'s list, in its order.
    public var suffixes: [String] {
        [
            "mptm", "mod", "s3m", "xm", "it", "669", "amf", "ams", "c67", "dbm", "digi", "dmf", "dsm", "dtm", "far",
            "imf", "ice", "j2b", "m15", "mdl", "med", "mms", "mt2", "mtm", "nst", "okt", "plm", "psm", "pt36", "ptm",
            "sfx", "sfx2", "st26", "stk", "stm", "stp", "ult", "wow", "gdm", "mo3", "oxm", "umx", "xpk", "ppm",
            "mmcmp",
        ]
    }
    /// None.
    public var mimeTypes: [String] { [] }

    /// `mpd`'s `OPENMPT_SAMPLE_RATE`.
    static let sampleRate = 48000

    /// What `mpd`'s `decoder { plugin "openmpt" }` block sets, with its defaults (applied to every module
    /// played; the scan does not use them).
    public struct Options: Sendable, Hashable {
        /// `repeat_count`: how many times the song repeats after its first play; -1: forever. Default 0.
        public var repeatCount = 0
        /// `stereo_separation` in percent. Default 100.
        public var stereoSeparation = 100
        /// `interpolation_filter`: the filter's taps (0: libopenmpt's default). Default 0.
        public var interpolationFilter = 0
        /// `override_mptm_interp_filter`: apply `interpolationFilter` to MPTM modules too (else they use their
        /// own). Default `false`.
        public var overrideMPTMInterpolationFilter = false
        /// `volume_ramping` strength (-1: libopenmpt's default). Default -1.
        public var volumeRamping = -1
        /// `sync_samples`: seeks synchronise the samples. Default `true`.
        public var syncSamples = true
        /// `emulate_amiga`: the Amiga resampler for Amiga modules. Default `true`.
        public var emulateAmiga = true
        /// `emulate_amiga_type` (`auto`, `a500`, `a1200`, `unfiltered`). Default `auto`.
        public var emulateAmigaType = "auto"

        /// `mpd`'s defaults.
        public init() {}
    }

    /// The options in effect.
    public let options: Options

    /// Creates the plugin.
    public init(options: Options = Options()) { self.options = options }

    /// The module's tags and duration.
    ///
    /// - Throws: `FormatError.notRecognized` when the file cannot be read or libopenmpt cannot load it.
    public func readInfo(path: String) throws(FormatError) -> SongInfo { Self.info(try Self.load(path)) }

    /// As `readInfo(path:)`, over a remote stream (`openmpt_scan_stream`, the plugin's only scan): the whole
    /// stream is read into memory first, within `mpd`'s bounds.
    ///
    /// - Throws: `FormatError.notRecognized` when the stream cannot be read or libopenmpt cannot load it (`mpd`'s
    ///   scan catches every error).
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        Self.info(try Self.load(input: input))
    }

    private static func info(_ module: OpenMPTModule) -> SongInfo {
        let raw = [
            RawTagItem(.title, module.metadata("title")), RawTagItem(.artist, module.metadata("artist")),
            RawTagItem(.comment, module.metadata("message")), RawTagItem(.date, module.metadata("date")),
            RawTagItem(.performer, module.metadata("tracker")),
        ]
        return SongInfo(
            tags: TagCollector.tagItems(raw), durationMilliseconds: Self.milliseconds(module.durationSeconds))
    }

    /// libopenmpt reads no pictures.
    ///
    /// - Throws: `FormatError.notRecognized` when libopenmpt cannot load the file.
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        _ = try Self.load(path)
        return nil
    }

    /// `mpd`'s openmpt plugin reports no name/value pairs.
    ///
    /// - Throws: `FormatError.notRecognized` when libopenmpt cannot load the file.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        _ = try Self.load(path)
        return []
    }

    /// A decoder of the module read whole from `input`.
    ///
    /// - Throws: `FormatError` when the stream cannot be read or libopenmpt cannot load it.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        let data = try WholeStream.read(input)
        do {
            let module = try OpenMPTModule(data: data)
            let options = self.options
            try module.setRepeatCount(options.repeatCount)
            try module.setRenderParameter(.stereoSeparationPercent, options.stereoSeparation)
            // As mpd: an MPTM module keeps the filter its composer chose unless told otherwise.
            let ownFilter = !options.overrideMPTMInterpolationFilter && module.metadata("type") == Array("mptm".utf8)
            try module.setRenderParameter(.interpolationFilterLength, ownFilter ? 0 : options.interpolationFilter)
            try module.setRenderParameter(.volumeRampingStrength, options.volumeRamping)
            try module.setControl("seek.sync_samples", options.syncSamples)
            try module.setControl("render.resampler.emulate_amiga", options.emulateAmiga)
            try module.setControl("render.resampler.emulate_amiga_type", options.emulateAmigaType)
            return OpenMPTDecoder(module: module, milliseconds: Self.milliseconds(module.durationSeconds))
        } catch {
            throw .decoder("\(error)")
        }
    }

    /// Seconds to whole milliseconds, truncated (`mpd`'s `SongTime::FromS`); 0 for a negative or NaN value.
    static func milliseconds(_ seconds: Double) -> UInt64 {
        let value = seconds * 1000
        guard value.isFinite, value > 0 else { return 0 }
        return UInt64(min(value, Double(UInt32.max)))
    }

    static func load(_ path: String) throws(FormatError) -> OpenMPTModule {
        do {
            return try Self.load(input: try FileInputStream(path: path))
        } catch {
            throw .notRecognized(path: path)
        }
    }

    static func load(input: any InputStream) throws(FormatError) -> OpenMPTModule {
        do {
            return try OpenMPTModule(data: try WholeStream.read(input))
        } catch {
            throw .notRecognized(path: input.uri)
        }
    }
}

/// Renders a module as `mpd`'s openmpt plugin does: 48000 Hz float stereo, 512 frames per render call, until
/// libopenmpt renders nothing.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate.
final class OpenMPTDecoder: Decoder {
    /// `48000:f:2`.
    let format = AudioFormat(sampleRate: OpenMPTFormat.sampleRate, sampleFormat: .float, channels: 2)
    /// libopenmpt's duration, in whole milliseconds.
    let totalFrames: UInt64?
    private let module: OpenMPTModule
    /// `mpd`'s `OPENMPT_FRAME_SIZE` (4096 bytes) in stereo float frames.
    private static let chunkFrames = 512
    private let chunk: UnsafeMutableBufferPointer<Float>
    private var consumed = 0
    private var pending = 0
    private var ended = false

    init(module: OpenMPTModule, milliseconds: UInt64) {
        self.module = module
        self.totalFrames = milliseconds * UInt64(OpenMPTFormat.sampleRate) / 1000
        self.chunk = .allocate(capacity: Self.chunkFrames * 2)
        self.chunk.initialize(repeating: 0)
    }

    deinit { self.chunk.deallocate() }

    /// Delivers rendered frames, rendering the next chunk when none is left.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end of the song.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if self.pending == 0 {
            if self.ended { return 0 }
            let rendered = self.module.render(into: self.chunk, sampleRate: OpenMPTFormat.sampleRate)
            guard rendered > 0 else {
                self.ended = true
                return 0
            }
            self.consumed = 0
            self.pending = rendered
        }
        let frames = min(self.pending, buffer.count / 8)
        let source = UnsafeRawBufferPointer(
            UnsafeMutableBufferPointer(rebasing: self.chunk[(self.consumed * 2)..<((self.consumed + frames) * 2)]))
        buffer.copyMemory(from: source)
        self.consumed += frames
        self.pending -= frames
        return frames
    }

    /// Moves to the millisecond of `frame` (libopenmpt goes to the start of the row playing then), dropping
    /// the rest of the chunk.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: the frame of that millisecond: as in `mpd`, the position reported is the one asked for.
    @discardableResult
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        let milliseconds = frame * 1000 / UInt64(OpenMPTFormat.sampleRate)
        self.module.setPosition(seconds: Double(milliseconds) / 1000)
        self.pending = 0
        self.ended = false
        return milliseconds * UInt64(OpenMPTFormat.sampleRate) / 1000
    }
}
