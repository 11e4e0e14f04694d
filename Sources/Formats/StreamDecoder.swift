// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model

/// A decoder over a remote stream: the format plugin's decoder, plus the tags the stream's transport
/// carries (ICY titles), which `readTag()` passes on as `mpd`'s decoder bridge does (`UpdateStreamTag`).
struct StreamDecoder: Decoder {
    var decoder: any Decoder
    let input: any InputStream

    var format: AudioFormat { self.decoder.format }
    var totalFrames: UInt64? { self.decoder.totalFrames }
    var totalFramesOverrideLibrary: Bool { self.decoder.totalFramesOverrideLibrary }
    var bitRate: Int { self.decoder.bitRate }
    var mixRampStart: String? { self.decoder.mixRampStart }
    var mixRampEnd: String? { self.decoder.mixRampEnd }
    var isSeekable: Bool { self.decoder.isSeekable && self.input.isSeekable }

    mutating func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        try self.decoder.decode(into: buffer)
    }

    @discardableResult
    mutating func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        try self.decoder.seek(toFrame: frame)
    }

    func readTag() -> [TagItem]? { self.input.readTag() ?? self.decoder.readTag() }
}

extension FormatRegistry {
    /// Opens a decoder for a remote stream as `mpd`'s `decoder_run_stream` chooses its plugin: each plugin,
    /// in the registry's order, whose MIME types hold the stream's `Content-Type` or whose suffixes hold the
    /// suffix of the URL's path, tried from the start of the stream; when none matched, the `ffmpeg` plugin
    /// (`mpd`'s fallback for streams with neither). Decoder thread.
    ///
    /// - Throws: the first plugin's error, or `FormatError.notRecognized` when no plugin takes the stream.
    public func openStreamDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        let mimePlugins = input.mimeType.map { Set(self.plugins(forMimeType: $0).map(\.name)) } ?? []
        let suffixPlugins = Set(self.plugins(forPath: Self.path(ofURL: input.uri)).map(\.name))
        var candidates = self.plugins.filter { mimePlugins.contains($0.name) || suffixPlugins.contains($0.name) }
        if candidates.isEmpty, let fallback = self.plugins.first(where: { $0.name == "ffmpeg" }) {
            candidates = [fallback]
        }
        let start = input.offset
        var firstError: FormatError?
        for (index, plugin) in candidates.enumerated() {
            // mpd rewinds before each plugin, and tries it even when the stream cannot rewind.
            if index > 0 { try? input.seek(to: start) }
            do {
                return StreamDecoder(decoder: try plugin.makeDecoder(input: input), input: input)
            } catch {
                if case .input = error { throw error }
                firstError = firstError ?? error
            }
        }
        throw firstError ?? .notRecognized(path: input.uri)
    }

    /// The path of a URL, without its query and fragment (where `mpd` looks for a suffix).
    static func path(ofURL url: String) -> Substring {
        let end = url.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? url.endIndex
        return url[..<end]
    }
}
