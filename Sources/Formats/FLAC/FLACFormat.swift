// SPDX-License-Identifier: GPL-3.0-or-later

import FLAC
import Input
import Model

/// Native FLAC (`.flac`) as Debian's `mpd` 0.23.12 reads it with its `flac` plugin: metadata through libFLAC's
/// metadata chain (an ID3v2 tag before `fLaC` is skipped), audio through libFLAC's stream decoder.
///
/// Stateless; any thread.
public struct FLACFormat: FormatPlugin {
    /// `flac`.
    public let name = "flac"
    /// `flac`.
    public let suffixes = ["flac"]
    /// The MIME types `mpd`'s plugin lists.
    public let mimeTypes = ["application/flac", "application/x-flac", "audio/flac", "audio/x-flac"]

    /// Creates the plugin.
    public init() {}

    /// Tags from the VORBIS_COMMENT block, duration and format from STREAMINFO, ReplayGain, picture presence.
    ///
    /// - Throws: `FormatError.notRecognized` when libFLAC cannot read the metadata; `.input` when the file
    ///   cannot be opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        FLACScan.info(try FLACScan.blocks(path: path, container: .native))
    }

    /// As `readInfo(path:)`, over a remote stream.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        FLACScan.info(try FLACScan.blocks(input: input, container: .native))
    }

    /// The first PICTURE block with image data.
    ///
    /// - Throws: `FormatError.notRecognized` when libFLAC cannot read the metadata.
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        FLACScan.picture(try FLACScan.blocks(path: path, container: .native))
    }

    /// Every Vorbis comment entry as a name/value pair, in stored order.
    ///
    /// - Throws: `FormatError.notRecognized` when libFLAC cannot read the metadata.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        FLACScan.comments(try FLACScan.blocks(path: path, container: .native))
    }

    /// As `readComments(path:)`, over a remote stream.
    public func readComments(input: any InputStream) throws(FormatError) -> [(name: String, value: String)] {
        FLACScan.comments(try FLACScan.blocks(input: input, container: .native))
    }

    /// As `readPicture(path:)`, over a remote stream.
    public func readPicture(input: any InputStream) throws(FormatError) -> Picture? {
        FLACScan.picture(try FLACScan.blocks(input: input, container: .native))
    }

    /// Opens a libFLAC stream decoder over `input`.
    ///
    /// - Throws: what `FLACDecoder.init` throws.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        try FLACDecoder(input: input, container: .native)
    }
}

/// FLAC in Ogg (`.ogg`, `.oga`) as `mpd`'s `oggflac` plugin reads it: the same scan over libFLAC's Ogg metadata
/// chain, which fails for other Ogg codecs so the next plugin for the suffix gets the file; the decoder
/// checks the first page for FLAC's mapping first, as `mpd` does.
///
/// Stateless; any thread.
public struct OggFLACFormat: FormatPlugin {
    /// `oggflac`.
    public let name = "oggflac"
    /// `ogg` and `oga`.
    public let suffixes = ["ogg", "oga"]
    /// The MIME types `mpd`'s plugin lists.
    public let mimeTypes = ["application/ogg", "application/x-ogg", "audio/ogg", "audio/x-flac+ogg", "audio/x-ogg"]

    /// Creates the plugin.
    public init() {}

    /// As `FLACFormat.readInfo(path:)`, over the Ogg stream.
    ///
    /// - Throws: `FormatError.notRecognized` when the file is not Ogg FLAC; `.input` when it cannot be opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        FLACScan.info(try FLACScan.blocks(path: path, container: .ogg))
    }

    /// As `readInfo(path:)`, over a remote stream.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        FLACScan.info(try FLACScan.blocks(input: input, container: .ogg))
    }

    /// The first PICTURE block with image data.
    ///
    /// - Throws: `FormatError.notRecognized` when the file is not Ogg FLAC.
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        FLACScan.picture(try FLACScan.blocks(path: path, container: .ogg))
    }

    /// Every Vorbis comment entry as a name/value pair, in stored order.
    ///
    /// - Throws: `FormatError.notRecognized` when the file is not Ogg FLAC.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        FLACScan.comments(try FLACScan.blocks(path: path, container: .ogg))
    }

    /// As `readComments(path:)`, over a remote stream.
    public func readComments(input: any InputStream) throws(FormatError) -> [(name: String, value: String)] {
        FLACScan.comments(try FLACScan.blocks(input: input, container: .ogg))
    }

    /// As `readPicture(path:)`, over a remote stream.
    public func readPicture(input: any InputStream) throws(FormatError) -> Picture? {
        FLACScan.picture(try FLACScan.blocks(input: input, container: .ogg))
    }

    /// Opens a libFLAC Ogg decoder over `input` when its first 41 bytes look like Ogg FLAC (`mpd`'s
    /// `ogg_codec_detect`: `OggS`, then `FLAC` at 29 and `fLaC` at 37, or `FLAC`/`fLaC` at 28); rewinds first.
    ///
    /// - Throws: `FormatError.notRecognized` for other streams (Vorbis, Opus…) or when the stream cannot
    ///   rewind; what `FLACDecoder.init` throws.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        let start = input.offset
        let head: [UInt8]?
        do {
            head = try input.readBytes(41)
            try input.seek(to: start)
        } catch {
            throw .notRecognized(path: input.uri)
        }
        guard let head, Self.isOggFLAC(head) else { throw .notRecognized(path: input.uri) }
        return try FLACDecoder(input: input, container: .ogg)
    }

    /// `mpd`'s test of the first 41 bytes of an Ogg stream for FLAC.
    static func isOggFLAC(_ head: [UInt8]) -> Bool {
        guard head.count >= 41, head.starts(with: Array("OggS".utf8)) else { return false }
        let flac = Array("FLAC".utf8)
        let magic = Array("fLaC".utf8)
        return (head[29..<33].elementsEqual(flac) && head[37..<41].elementsEqual(magic))
            || head[28..<32].elementsEqual(flac) || head[28..<32].elementsEqual(magic)
    }
}
