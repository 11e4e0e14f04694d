// SPDX-License-Identifier: GPL-3.0-or-later

import AdPlug
import ID3Tag
import Input
import Model

/// The settings of `mpd`'s adplug plugin (its `decoder { plugin "adplug" }` block), with `mpd`'s defaults.
public struct AdPlugOptions: Sendable, Hashable {
    /// `sample_rate`: the rate the OPL emulator renders at; 48000.
    public var sampleRate: Int

    /// Creates settings; every parameter defaults to `mpd`'s default.
    public init(sampleRate: Int = 48000) { self.sampleRate = sampleRate }
}

/// AdLib (OPL2/OPL3) music through AdPlug, as Debian's `mpd` 0.23.12 `adplug` plugin (AdPlug 2.3.3) reads
/// and plays it: the suffixes `mpd` claims, each opened by AdPlug's players for that suffix first, then all
/// the others.
///
/// - Tags: `Title`, `Artist` (the author) and `Comment` (the description), when not empty.
/// - Duration: AdPlug's computed song length, always (0 when it has none).
/// - Decoding: 16-bit stereo at `sample_rate` (48000 Hz); per replay tick, 1024 frames, whatever the tick
///   rate, as `mpd` renders (so songs play at `mpd`'s speed, not the tracker's); not seekable.
///
/// Any thread.
public struct AdPlugFormat: FileScanFormatPlugin {
    /// `adplug`.
    public var name: String { "adplug" }
    /// `mpd`'s list.
    public var suffixes: [String] { ["amd", "d00", "hsc", "laa", "rad", "raw", "sa2"] }
    /// None.
    public var mimeTypes: [String] { [] }

    /// The settings.
    public let options: AdPlugOptions

    /// Creates the plugin with `mpd`'s default settings.
    public init() { self.options = AdPlugOptions() }

    /// Creates the plugin with `options`.
    ///
    /// - Throws: `FormatError.unsupportedFormat` for a sample rate `mpd`'s `CheckSampleRate` refuses (not
    ///   between 1 and 2^30 - 1).
    public init(options: AdPlugOptions) throws(FormatError) {
        guard options.sampleRate > 0, options.sampleRate < 1 << 30 else {
            throw .unsupportedFormat("Invalid sample rate: \(options.sampleRate)")
        }
        self.options = options
    }

    /// The song's tags and length.
    ///
    /// - Throws: `FormatError.notRecognized` when no AdPlug player loads the file.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        guard let player = try? self.open(path) else { throw .notRecognized(path: path) }
        var raw: [RawTagItem] = []
        for (type, value) in [(TagType.title, player.title), (.artist, player.author), (.comment, player.description)]
        where !value.isEmpty {
            raw.append(RawTagItem(type, value))
        }
        return SongInfo(
            tags: TagCollector.tagItems(raw), durationMilliseconds: UInt64(player.songLengthMilliseconds()))
    }

    /// A decoder of a stream, AdPlug choosing its player by the stream's URI.
    ///
    /// - Throws: `FormatError` when the stream cannot be read or no AdPlug player loads it.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        let data = try WholeStream.read(input)
        let uri = input.uri
        do {
            let player = try AdPlugPlayer(path: uri, sampleRate: self.options.sampleRate) { name in
                name == uri ? data : nil
            }
            return AdPlugDecoder(player: player, sampleRate: self.options.sampleRate)
        } catch {
            throw .decoder("\(error)")
        }
    }

    /// Always `true`: the library opens the file (and the files it needs beside it) by its path.
    public var decodesByPath: Bool { true }

    /// A decoder of the file at `path`.
    ///
    /// - Throws: `FormatError.decoder` when no AdPlug player loads the file.
    public func makeDecoder(path: String) throws(FormatError) -> any Decoder {
        do {
            return AdPlugDecoder(player: try self.open(path), sampleRate: self.options.sampleRate)
        } catch {
            throw .decoder("\(error)")
        }
    }

    /// Opens `path`, AdPlug reading it (and any file it needs next to it) through `FileInputStream`s.
    ///
    /// - Throws: `AdPlugError` when no player loads it.
    private func open(_ path: String) throws(AdPlugError) -> AdPlugPlayer {
        try AdPlugPlayer(path: path, sampleRate: self.options.sampleRate) { name in
            guard let input = try? FileInputStream(path: name), let size = input.size,
                size <= UInt64(AdPlugPlayer.fileLimit)
            else { return nil }
            return size == 0 ? [] : try? WholeStream.read(input)
        }
    }
}

/// Plays an AdPlug song as `mpd`'s adplug plugin does: one replay tick, then 1024 rendered frames, until the
/// player reports the end.
///
/// Confined to the decoding thread. `decode(into:)` does not allocate.
final class AdPlugDecoder: Decoder {
    /// `<rate>:16:2`.
    let format: AudioFormat
    /// AdPlug's computed length.
    let totalFrames: UInt64?
    /// `mpd`'s plugin tells its player the song cannot seek.
    var isSeekable: Bool { false }
    private let player: AdPlugPlayer
    /// `mpd`'s buffer: 2048 samples, 1024 stereo frames per tick.
    private static let chunkFrames = 1024
    private var chunk = RenderedChunk(samples: 2 * AdPlugDecoder.chunkFrames, channels: 2)

    /// Plays `player`'s song (its length is computed now, which rewinds it).
    init(player: AdPlugPlayer, sampleRate: Int) {
        self.player = player
        self.format = AudioFormat(sampleRate: sampleRate, sampleFormat: .s16, channels: 2)
        self.totalFrames = UInt64(player.songLengthMilliseconds()) * UInt64(sampleRate) / 1000
    }

    deinit { self.chunk.deallocate() }

    /// Delivers rendered frames, running the next tick and rendering its 1024 frames when none are left.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 once the song ended.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if self.chunk.pending == 0 {
            guard self.player.update() else { return 0 }
            self.player.render(into: self.chunk.samples)
            self.chunk.rendered(frames: Self.chunkFrames)
        }
        return self.chunk.deliver(into: buffer)
    }

    /// Not seekable.
    ///
    /// - Throws: `FormatError.decoder` always.
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        throw .decoder("adplug songs are not seekable")
    }
}
