// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import MikMod
import Model

/// The settings of `mpd`'s mikmod plugin (its `decoder { plugin "mikmod" }` block), with `mpd`'s defaults.
public struct MikModOptions: Sendable, Hashable {
    /// `loop`: whether a module that jumps back plays for ever. `false`.
    public var loop: Bool
    /// `sample_rate`: the mixing rate in Hz. 44100.
    public var sampleRate: Int

    /// Creates options; the defaults are `mpd`'s.
    public init(loop: Bool = false, sampleRate: Int = 44100) {
        self.loop = loop
        self.sampleRate = sampleRate
    }
}

/// Tracker modules through libmikmod, as Debian's `mpd` 0.23.12 `mikmod` plugin reads them. It comes after
/// `openmpt` and `modplug` in `mpd`'s order, so it reads the files both refuse and the suffixes only it claims
/// (`stx`, `uni`); libmikmod recognises a module by its content, whatever the suffix.
///
/// - The whole file is loaded into memory (1 byte to 100 MiB, as the other tracker plugins).
/// - Tags: `Title` from libmikmod's title reader, nothing else; no duration, no format line, no picture, no
///   comments.
/// - Decoding: 16-bit stereo at the options' rate, in chunks of 4096 bytes while the module plays; not
///   seekable, no length.
///
/// Any thread.
public struct MikModFormat: FileScanFormatPlugin {
    /// `mikmod`.
    public var name: String { "mikmod" }
    /// `mpd`'s list, in its order.
    public var suffixes: [String] {
        ["amf", "dsm", "far", "gdm", "imf", "it", "med", "mod", "mtm", "s3m", "stm", "stx", "ult", "uni", "xm"]
    }
    /// None.
    public var mimeTypes: [String] { [] }
    /// The plugin's settings.
    public let options: MikModOptions

    /// The plugin with the options' rate. libmikmod is loaded and set up (as `mpd`'s plugin initialisation sets
    /// it up) on first use, with the rate of the plugin that uses it; when it cannot be, the reason is logged
    /// once and the plugin declines every file, as `mpd` leaves out a plugin whose initialisation fails.
    ///
    /// - Returns: `nil` when libmikmod cannot mix at the options' rate.
    public init?(options: MikModOptions = MikModOptions()) {
        guard MikModLibrary.canMix(sampleRate: options.sampleRate) else { return nil }
        self.options = options
    }

    /// libmikmod set up at the options' rate; `false` when it cannot be (logged once by `MikModLibrary`).
    private func setUp() -> Bool {
        do {
            try MikModLibrary.setUp(sampleRate: self.options.sampleRate)
            return true
        } catch {
            return false
        }
    }

    /// The module's title.
    ///
    /// - Throws: `FormatError.notRecognized` when the file cannot be read or libmikmod cannot load it.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        guard self.setUp() else { throw .notRecognized(path: path) }
        let data = try WholeStream.file(path)
        guard MikModModule(data: data) != nil else { throw .notRecognized(path: path) }
        let title = MikModModule.title(data: data) ?? []
        return SongInfo(tags: TagCollector.tagItems([RawTagItem(.title, title)]))
    }

    /// A decoder of the module read whole from `input`.
    ///
    /// - Throws: `FormatError` when the stream cannot be read or libmikmod cannot load it.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        guard self.setUp() else { throw .notRecognized(path: input.uri) }
        guard let module = MikModModule(data: try WholeStream.read(input), loop: self.options.loop),
            let rate = MikModLibrary.sampleRate
        else {
            throw .decoder("\(input.uri): failed to open mod")
        }
        return ChunkedDecoder(
            source: MikModSource(module: module),
            format: AudioFormat(sampleRate: rate, sampleFormat: .s16, channels: 2), chunkBytes: MikModSource.chunkBytes)
    }
}

/// A module as `mpd`'s mikmod plugin renders it: started when first rendered, then chunks while libmikmod plays
/// it.
///
/// Confined to the decoding thread; `renderChunk(into:)` does not allocate (it takes libmikmod's own lock to
/// ask whether the module still plays).
final class MikModSource: ChunkSource {
    /// `mpd`'s `MIKMOD_FRAME_SIZE`, in bytes.
    static let chunkBytes = 4096
    private let module: MikModModule
    private var started = false

    init(module: MikModModule) { self.module = module }

    func renderChunk(into chunk: UnsafeMutableRawBufferPointer) -> Int {
        if !self.started {
            self.started = true
            self.module.start()
        }
        guard self.module.isPlaying else { return 0 }
        return self.module.render(into: chunk)
    }
}
