// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import Model

/// A decoder over a remote stream: the format plugin's decoder, plus the tags the stream's transport
/// carries (ICY titles), merged with those the decoder read in the stream (its ID3 tag or comments) as
/// `mpd`'s decoder bridge merges them: when the decoder reports a tag (`SubmitTag`) its items win over the
/// stream's; when only the stream brings a new one (`SubmitData`'s `UpdateStreamTag`) the stream's win.
///
/// Confined to the decoding thread.
final class StreamDecoder: Decoder {
    private var decoder: any Decoder
    private let input: any InputStream
    /// The last tags of each source.
    private var streamTags: [TagItem]?
    private var decoderTags: [TagItem]?
    /// The ReplayGain of the stream's APE tag, read before the decoder opened.
    private let apeReplayGain: ReplayGainInfo?

    init(decoder: any Decoder, input: any InputStream, apeReplayGain: ReplayGainInfo? = nil) {
        self.decoder = decoder
        self.input = input
        self.apeReplayGain = apeReplayGain
    }

    var format: AudioFormat { self.decoder.format }
    var totalFrames: UInt64? { self.decoder.totalFrames }
    var totalFramesOverrideLibrary: Bool { self.decoder.totalFramesOverrideLibrary }
    var bitRate: Int { self.decoder.bitRate }
    var mixRampStart: String? { self.decoder.mixRampStart }
    var mixRampEnd: String? { self.decoder.mixRampEnd }
    var isSeekable: Bool { self.decoder.isSeekable && self.input.isSeekable }
    /// The decoder's, else the APE tag's (`mpd` submits the APE tag's first; the plugin's replaces it).
    var replayGain: ReplayGainInfo? { self.decoder.replayGain ?? self.apeReplayGain }

    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        try self.decoder.decode(into: buffer)
    }

    @discardableResult
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        try self.decoder.seek(toFrame: frame)
    }

    func readTag() -> [TagItem]? {
        let fromStream = self.input.readTag()
        let fromDecoder = self.decoder.readTag()
        guard fromStream != nil || fromDecoder != nil else { return nil }
        self.streamTags = fromStream ?? self.streamTags
        self.decoderTags = fromDecoder ?? self.decoderTags
        if fromDecoder != nil { return Self.merged(base: self.streamTags, add: self.decoderTags) }
        return Self.merged(base: self.decoderTags, add: self.streamTags)
    }

    /// `mpd`'s `Tag::Merge(base, add)`: the items of `add`, then those of `base` of types `add` has none of.
    static func merged(base: [TagItem]?, add: [TagItem]?) -> [TagItem]? {
        guard let add else { return base }
        guard let base else { return add }
        let types = Set(add.map(\.type))
        return add + base.filter { !types.contains($0.type) }
    }
}

extension FormatRegistry {
    /// Opens a decoder for a remote stream as `mpd`'s `decoder_run_stream` chooses its plugin: each plugin,
    /// in the registry's order, whose MIME types hold the stream's `Content-Type` or whose suffixes hold the
    /// suffix of the URL's path, tried from the start of the stream; when none matched, the `ffmpeg` plugin
    /// (`mpd`'s fallback for streams with neither). Decoder thread.
    ///
    /// - Parameter readsAPEReplayGain: ReplayGain is on: first read the ReplayGain of the APE tag at the end of
    ///   the stream, as `mpd`'s decoder thread does then (`MaybeLoadReplayGain`), when the stream seeks cheaply
    ///   (it knows its size, can seek, and is no `http://`, `https://` or `qobuz://` URL) and is no virtual file
    ///   (MIME type `audio/x-mpd-…`); the decoder's own ReplayGain replaces it.
    /// - Throws: the first plugin's error, or `FormatError.notRecognized` when no plugin takes the stream.
    public func openStreamDecoder(input: any InputStream, readsAPEReplayGain: Bool = false) throws(FormatError)
        -> any Decoder
    {
        try self.openStream(input: input, readsAPEReplayGain: readsAPEReplayGain).decoder
    }

    /// Whether `mpd` reads the tags at the end of `input` (`InputStream::CheapSeeking` and a known size): not
    /// over HTTP, where each seek is a new request.
    static func seeksCheaply(_ input: any InputStream) -> Bool { input.isCheapToSeek && input.size != nil }

    /// The tags a scan of a remote stream reports (`lsinfo URL`, `mpd`'s `tag_stream_scan`): those the decoder
    /// of the plugin that takes it reads in the stream, merged with the transport's; none for a plugin whose
    /// scan reports none. Off the loop.
    ///
    /// - Throws: as `openStreamDecoder(input:)`.
    public func scanStreamTags(input: any InputStream) throws(FormatError) -> [TagItem] {
        let (plugin, decoder) = try self.openStream(input: input)
        return plugin.scansStreamTags ? (decoder.readTag() ?? []) : []
    }

    private func openStream(input: any InputStream, readsAPEReplayGain: Bool = false) throws(FormatError)
        -> (plugin: any FormatPlugin, decoder: any Decoder)
    {
        let start = input.offset
        var apeReplayGain: ReplayGainInfo?
        var moved = false
        if readsAPEReplayGain, !(input.mimeType ?? "").hasPrefix("audio/x-mpd-"), Self.seeksCheaply(input),
            let source = GenericTags.source(input)
        {
            apeReplayGain = APETag.read(from: source)?.replayGain()
            moved = true
        }
        var candidates = self.streamCandidates(input)
        if candidates.isEmpty, let fallback = self.plugins.first(where: { $0.name == "ffmpeg" }) {
            candidates = [fallback]
        }
        var firstError: FormatError?
        for (index, plugin) in candidates.enumerated() {
            // mpd rewinds before each plugin, and tries it even when the stream cannot rewind.
            if index > 0 || moved { try? input.seek(to: start) }
            do {
                let decoder = try plugin.makeDecoder(input: input)
                return (plugin, StreamDecoder(decoder: decoder, input: input, apeReplayGain: apeReplayGain))
            } catch {
                if case .input = error { throw error }
                firstError = firstError ?? error
            }
        }
        throw firstError ?? .notRecognized(path: input.uri)
    }

    /// The plugins for a stream's MIME type or the suffix of its URL, in the registry's order.
    func streamCandidates(_ input: any InputStream) -> [any FormatPlugin] {
        let mimePlugins = input.mimeType.map { Set(self.plugins(forMimeType: $0).map(\.name)) } ?? []
        let suffixPlugins = Set((Suffix.ofURI(input.uri).map { self.plugins(forSuffix: $0) } ?? []).map(\.name))
        return self.plugins.filter { mimePlugins.contains($0.name) || suffixPlugins.contains($0.name) }
    }
}
