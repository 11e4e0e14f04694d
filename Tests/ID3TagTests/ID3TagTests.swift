// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import ID3Tag
import Model
import Testing

/// Builders for ID3v2 bytes (no tools needed).
enum Build {
    static func syncsafe(_ size: Int) -> [UInt8] {
        [UInt8((size >> 21) & 0x7F), UInt8((size >> 14) & 0x7F), UInt8((size >> 7) & 0x7F), UInt8(size & 0x7F)]
    }

    static func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + self.syncsafe(body.count) + [0, 0] + body
    }

    static func text(_ id: String, _ values: [String], encoding: UInt8 = 3) -> [UInt8] {
        self.frame(id, [encoding] + Array(values.joined(separator: "\0").utf8))
    }

    static func txxx(_ name: String, _ value: String) -> [UInt8] {
        self.frame("TXXX", [3] + Array(name.utf8) + [0] + Array(value.utf8))
    }

    static func tag(_ frames: [[UInt8]], footer: Bool = false) -> [UInt8] {
        let body = frames.flatMap { $0 }
        let flags: UInt8 = footer ? 0x10 : 0
        var bytes = Array("ID3".utf8) + [4, 0, flags] + self.syncsafe(body.count) + body
        if footer { bytes += Array("3DI".utf8) + [4, 0, flags] + self.syncsafe(body.count) }
        return bytes
    }

    static func id3v1(title: String) -> [UInt8] {
        Array("TAG".utf8) + Array((Array(title.utf8) + [UInt8](repeating: 0, count: 124)).prefix(124)) + [255]
    }

    static func temporaryFile(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "id3tag-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}

extension [RawTagItem] {
    var lines: [String] { self.map { "\($0.type.name): \(String(decoding: $0.value, as: UTF8.self))" } }
}

@Suite struct ID3TagQueryTests {
    @Test func queryReportsSizes() {
        let tag = Build.tag([Build.text("TIT2", ["x"])])
        #expect(ID3Tag.query(tag) == tag.count)
        let footerTag = Build.tag([Build.text("TIT2", ["x"])], footer: true)
        #expect(ID3Tag.query(footerTag) == footerTag.count)
        #expect(ID3Tag.query(Array(footerTag.suffix(10))) == -(footerTag.count - 20) - 10)
        #expect(ID3Tag.query(Build.id3v1(title: "t")) == 128)
        #expect(ID3Tag.query([0xFF, 0xFB, 0x90, 0, 0, 0, 0, 0, 0, 0]) == 0)
        #expect(ID3Tag.query([]) == 0)
        #expect(ID3Tag.query(Array("ID3".utf8)) == 0)
    }
}

@Suite struct ID3TagMappingTests {
    /// mpd scans frame types in a fixed sequence, so items come out in that order, not in file order.
    @Test func itemsFollowMPDScanOrder() throws {
        let tag = try #require(
            ID3Tag(
                parsing: Build.tag([
                    Build.text("TPUB", ["Label"]), Build.text("TIT2", ["Title"]),
                    Build.txxx("MusicBrainz Track Id", "mb"),
                    Build.text("TPE1", ["A", "B"]),
                    Build.frame("COMM", [3] + Array("eng".utf8) + [0] + Array("  c  ".utf8)),
                    Build.text("TCON", ["17"]), Build.text("TRCK", ["01/10"]), Build.text("TPE2", ["AA"]),
                    Build.frame("UFID", Array("http://musicbrainz.org".utf8) + [0] + Array("ufid".utf8)),
                    Build.txxx("ALBUMARTISTSORT", " sort "), Build.txxx("Other", "ignored"),
                ])))
        #expect(
            tag.mpdTagItems().lines == [
                "Artist: A", "Artist: B", "AlbumArtist: AA", "Title: Title", "Track: 01/10", "Genre: Rock",
                "Comment: c", "Label: Label", "MUSICBRAINZ_TRACKID: mb", "AlbumArtistSort:  sort ",
                "MUSICBRAINZ_TRACKID: ufid",
            ])
        #expect(
            tag.txxxPairs().map { String(decoding: $0.name, as: UTF8.self) } == [
                "MusicBrainz Track Id", "ALBUMARTISTSORT", "Other",
            ])
    }

    @Test(arguments: [
        ("  padded\t", "padded"), ("\u{01}ctl", "ctl"), ("   ", ""), ("a b", "a b"),
    ])
    func textValuesAreStripped(_ stored: String, _ expected: String) throws {
        let tag = try #require(ID3Tag(parsing: Build.tag([Build.text("TIT2", [stored])])))
        #expect(tag.mpdTagItems().lines == ["Title: \(expected)"])
    }

    @Test func textEncodingsDecode() throws {
        let utf16: [UInt8] = [1, 0xFF, 0xFE] + Array("Zoë".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        let tag = try #require(
            ID3Tag(
                parsing: Build.tag([
                    Build.frame("TIT2", utf16), Build.frame("TALB", [0, 0x41, 0x6C, 0x62, 0xE9]),
                ])))
        #expect(tag.mpdTagItems().lines == ["Title: Zoë", "Album: Albé"])
    }

    @Test func id3v1IsParsed() throws {
        let tag = try #require(ID3Tag(parsing: Build.id3v1(title: "Old")))
        #expect(tag.isID3v1)
        #expect(tag.mpdTagItems().lines == ["Title: Old"])
    }

    @Test func replayGainFromTXXXThenRVA2() throws {
        let txxx = try #require(
            ID3Tag(
                parsing: Build.tag([
                    Build.txxx("REPLAYGAIN_TRACK_GAIN", "-7.25 dB"), Build.txxx("replaygain_track_peak", "0.9"),
                ])))
        #expect(txxx.replayGain() == ReplayGainInfo(trackGain: -7.25, trackPeak: Double(Float(0.9))))
        // RVA2 "track", master volume -2.5 dB (-1280/512), 16 peak bits.
        let rva2 = try #require(
            ID3Tag(
                parsing: Build.tag([
                    Build.frame("RVA2", Array("track".utf8) + [0, 0x02, 0, 0, 0, 0x01, 0xFB, 0x00, 16, 0x7F, 0xFF])
                ])))
        #expect(rva2.replayGain() == ReplayGainInfo(trackGain: -2.5))
        #expect(try #require(ID3Tag(parsing: Build.tag([Build.text("TIT2", ["x"])]))).replayGain() == nil)
    }

    @Test func picturesSkipURLsAndEmptyData() throws {
        func apic(_ mime: String, _ data: [UInt8]) -> [UInt8] {
            Build.frame("APIC", [0] + Array(mime.utf8) + [0, 3, 0] + data)
        }
        let tag = try #require(
            ID3Tag(
                parsing: Build.tag([
                    apic("-->", Array("http://x".utf8)), apic("image/png", []), apic("image/png", [1, 2]),
                ])))
        #expect(tag.pictures() == [Picture(data: [1, 2], mimeType: "image/png")])
        #expect(tag.hasPicture)
    }
}

@Suite struct ID3LoaderTests {
    static let audio: [UInt8] = (0..<2000).map { _ in 0xAA }

    @Test func startTagWinsOverEnd() throws {
        let path = try Build.temporaryFile(
            Build.tag([Build.text("TIT2", ["front"])]) + Self.audio + Build.id3v1(title: "end"))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tag = try #require(ID3Loader.load(from: try TagSourceFile(path: path)))
        #expect(tag.mpdTagItems().lines == ["Title: front"])
    }

    @Test func id3v1AtEnd() throws {
        let path = try Build.temporaryFile(Self.audio + Build.id3v1(title: "end"))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(ID3Loader.load(from: try TagSourceFile(path: path))?.mpdTagItems().lines == ["Title: end"])
    }

    /// mpd 0.23 steps back from a footer by the body size plus 10, missing the header: the ID3v1 tag stays.
    @Test func appendedTagWithFooterFallsBackToID3v1() throws {
        let path = try Build.temporaryFile(
            Self.audio + Build.tag([Build.text("TIT2", ["appended"])], footer: true) + Build.id3v1(title: "v1"))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(ID3Loader.load(from: try TagSourceFile(path: path))?.mpdTagItems().lines == ["Title: v1"])
    }

    @Test func seekFrameChain() throws {
        let second = Build.tag([Build.text("TIT2", ["second"])])
        let first = Build.tag([Build.text("TIT2", ["first"]), Build.frame("SEEK", [0, 0, 0, 50])])
        let path = try Build.temporaryFile(first + [UInt8](repeating: 0, count: 50) + second + Self.audio)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(ID3Loader.load(from: try TagSourceFile(path: path))?.mpdTagItems().lines == ["Title: second"])
    }

    @Test(arguments: [
        [UInt8](), Array("ID3".utf8), Array("ID3".utf8) + [4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F],
        Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 20] + Array("TIT2".utf8) + [0x7F, 0x7F, 0x7F, 0x7F, 0, 0],
        Array("TAG".utf8),
    ])
    func hostileInputsGiveNoTag(_ bytes: [UInt8]) throws {
        let path = try Build.temporaryFile(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tag = ID3Loader.load(from: try TagSourceFile(path: path))
        _ = tag?.mpdTagItems()
        _ = tag?.pictures()
    }

    @Test(arguments: 0..<200)
    func randomTagBodiesNeverCrash(_ seed: Int) {
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        func next() -> UInt8 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
        let ids = ["TIT2", "TXXX", "COMM", "APIC", "UFID", "RVA2", "TCON", "SEEK", "TRCK"]
        var frames: [[UInt8]] = []
        for index in 0..<(seed % 6 + 1) {
            let body = (0..<(Int(next()) % 40)).map { _ in next() }
            frames.append(Build.frame(ids[(seed + index) % ids.count], body))
        }
        var bytes = Build.tag(frames)
        if seed % 4 == 0, bytes.count > 12 { bytes[5] = next() }
        if seed % 5 == 0, bytes.count > 20 { bytes[Int(next()) % bytes.count] = next() }
        bytes[3] = [2, 3, 4][seed % 3]
        if let tag = ID3Tag(parsing: bytes) {
            _ = tag.mpdTagItems()
            _ = tag.replayGain()
            _ = tag.pictures()
            _ = tag.seekOffset
            _ = tag.frameIDs
        }
    }
}

@Suite struct APETagTests {
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    static func ape(_ items: [(String, [UInt8], Int)], declaredSize: Int? = nil, count: Int? = nil) -> [UInt8] {
        var body: [UInt8] = []
        for (key, value, flags) in items { body += le32(value.count) + le32(flags) + Array(key.utf8) + [0] + value }
        return body + Array("APETAGEX".utf8) + le32(2000) + le32(declaredSize ?? body.count + 32)
            + le32(count ?? items.count) + le32(0) + [UInt8](repeating: 0, count: 8)
    }

    @Test func itemsMapLikeMPD() throws {
        let path = try Build.temporaryFile(
            [UInt8](repeating: 1, count: 100)
                + Self.ape([
                    ("Album Artist", Array("AA".utf8), 0), ("YEAR", Array("2004".utf8), 0),
                    ("artist", Array("A\0B".utf8), 0), ("Unknown", Array("x".utf8), 0), ("Title", [0xFF], 2),
                ]))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tag = try #require(APETag.read(from: try TagSourceFile(path: path)))
        let (recognized, items) = tag.mpdTagItems()
        #expect(recognized)
        #expect(items.lines == ["AlbumArtist: AA", "Date: 2004", "Artist: A", "Artist: B"])
    }

    @Test(arguments: [(1 << 30, nil), (10, nil), (80, 1_000_000), (40, 3)] as [(Int, Int?)])
    func hostileFootersAreSafe(_ declared: Int, _ count: Int?) throws {
        let path = try Build.temporaryFile(
            Self.ape([("Title", Array("t".utf8), 0)], declaredSize: declared, count: count))
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = APETag.read(from: try TagSourceFile(path: path))?.mpdTagItems()
    }
}
