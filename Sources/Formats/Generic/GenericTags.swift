// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import ID3Tag
import Input
import RawText

/// The result of `mpd`'s generic tag scan (`ScanGenericTags`): APE first, ID3 if APE recognised nothing.
public struct GenericTags {
    /// The items of the tag that won: the APE tag's if any of its items maps to a tag, else the ID3 tag's.
    public var items: [RawTagItem] = []
    /// The APEv2 tag at the end of the file, if any.
    public var ape: APETag?
    /// Whether the APE tag had an item that maps to a tag (then the ID3 tag is not looked at for tags).
    public var apeRecognized = false
    /// The ID3 tag `ID3Loader` finds, if any.
    public var id3: ID3Tag?

    /// Reads both tags of `file`. Any thread.
    public static func read(_ file: TagSourceFile) -> GenericTags {
        var result = GenericTags()
        result.ape = APETag.read(from: file)
        if let ape = result.ape {
            let (recognized, items) = ape.mpdTagItems()
            if recognized {
                result.apeRecognized = true
                result.items = items
            }
        }
        result.id3 = ID3Loader.load(from: file)
        if !result.apeRecognized, let id3 = result.id3 { result.items = id3.mpdTagItems() }
        return result
    }

    /// Reads the tags of a remote stream, as `mpd`'s `ScanGenericTags` over an input stream: only one that seeks
    /// and knows its size (each read seeks first: an HTTP stream makes a range request); `nil` otherwise. Where
    /// seeking is not cheap (`http://`, `https://`: `InputStream.isCheapToSeek`), `mpd` reads no APE tag and only
    /// an ID3v2 tag at the start. Blocks; the thread that owns `input`.
    public static func read(input: any InputStream) -> GenericTags? {
        guard let file = Self.source(input) else { return nil }
        guard input.isCheapToSeek else { return GenericTags(id3: ID3Loader.fromBeginning(file)) }
        return Self.read(file)
    }

    /// The APE tag of a remote stream, where `mpd` reads one (`tag_ape_scan`: a stream that seeks cheaply and
    /// knows its size). Blocks; the thread that owns `input`.
    static func ape(input: any InputStream) -> APETag? {
        guard input.isCheapToSeek, let file = Self.source(input) else { return nil }
        return APETag.read(from: file)
    }

    /// The tags of a stream where only the ID3 tag was looked for.
    private init(id3: ID3Tag?) {
        self.id3 = id3
        self.items = id3?.mpdTagItems() ?? []
    }

    /// No tags.
    init() {}

    /// Positional reads of a remote stream that seeks and knows its size (each read seeks first); `nil` otherwise.
    static func source(_ input: any InputStream) -> TagSourceFile? {
        guard input.isSeekable, let size = input.size else { return nil }
        return TagSourceFile(name: input.uri, size: Int(clamping: size)) { offset, buffer throws(TagFileError) in
            do throws(InputError) {
                try input.seek(to: UInt64(offset))
                return try input.readFully(into: buffer)
            } catch {
                throw TagFileError(function: "read", errno: EIO, path: input.uri)
            }
        }
    }

    /// The pairs `readcomments` prints from these tags: every text item of the APE tag (each value of a list
    /// separately); when none of its items maps to a tag, the ID3 tag's `TXXX` frames.
    public func comments() -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        for item in self.ape?.items ?? [] where item.isText {
            let name = RawText.decode(item.key)
            for value in item.value.split(separator: 0, omittingEmptySubsequences: false) {
                pairs.append((name, RawText.decode(value)))
            }
        }
        if !self.apeRecognized, let id3 = self.id3 {
            for pair in id3.txxxPairs() { pairs.append((RawText.decode(pair.name), RawText.decode(pair.value))) }
        }
        return pairs
    }
}
