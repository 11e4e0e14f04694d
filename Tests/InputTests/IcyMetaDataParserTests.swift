// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Testing

/// A metadata block as a server sends it: the length byte, the text, zero padding to a multiple of 16.
private func block(_ text: String) -> [UInt8] {
    let bytes = Array(text.utf8)
    let length = (bytes.count + 15) / 16
    return [UInt8(length)] + bytes + [UInt8](repeating: 0, count: length * 16 - bytes.count)
}

/// Runs `stream` through a parser in pieces of the given sizes (cycled); returns the audio and every tag read
/// after each piece.
private func parse(_ stream: [UInt8], metaInterval: Int, pieces: [Int]) -> (audio: [UInt8], tags: [[TagItem]]) {
    var parser = IcyMetaDataParser(metaInterval: metaInterval)
    var audio: [UInt8] = []
    var tags: [[TagItem]] = []
    var position = 0
    var index = 0
    while position < stream.count {
        let count = min(pieces[index % pieces.count], stream.count - position)
        index += 1
        var piece = Array(stream[position..<(position + count)])
        position += count
        let kept = piece.withUnsafeMutableBytes { parser.parseInPlace($0) }
        audio += piece[0..<kept]
        if let tag = parser.readTag() { tags.append(tag) }
    }
    return (audio, tags)
}

@Suite struct IcyMetaDataParserTests {
    @Test func titlesAreReadAsMpdReadsThem() {
        #expect(
            IcyMetaDataParser.parseTag(Array("StreamTitle='Artist - Song';".utf8)) == [TagItem(.title, "Artist - Song")]
        )
        // Other keys are ignored; the title may come second.
        #expect(
            IcyMetaDataParser.parseTag(Array("StreamUrl='http://x/';StreamTitle='A';".utf8)) == [TagItem(.title, "A")])
        // The value ends at the quote before a semicolon: quotes inside stay.
        #expect(IcyMetaDataParser.parseTag(Array("StreamTitle='It's here';".utf8)) == [TagItem(.title, "It's here")])
        // No semicolon after the value: it ends at the block's last quote.
        #expect(IcyMetaDataParser.parseTag(Array("StreamTitle='A'".utf8)) == [TagItem(.title, "A")])
        // A quote followed by neither: the first one ends the value.
        #expect(IcyMetaDataParser.parseTag(Array("StreamTitle='A'B".utf8)) == [TagItem(.title, "A")])
        // No closing quote at all: nothing.
        #expect(IcyMetaDataParser.parseTag(Array("StreamTitle='A".utf8)) == [])
        // Doubled quotes lose one pair.
        #expect(IcyMetaDataParser.parseTag(Array("StreamTitle=''A'';".utf8)) == [TagItem(.title, "A")])
        // Empty titles are dropped.
        #expect(IcyMetaDataParser.parseTag(Array("StreamTitle='';".utf8)) == [])
        #expect(IcyMetaDataParser.parseTag(Array("StreamTitle='''';".utf8)) == [])
        // A value without a quote is skipped up to the next semicolon.
        #expect(IcyMetaDataParser.parseTag(Array("StreamTitle=A;StreamTitle='B';".utf8)) == [TagItem(.title, "B")])
        #expect(IcyMetaDataParser.parseTag(Array("StreamTitle=A".utf8)) == [])
        // Names are compared exactly, up to a zero byte.
        #expect(IcyMetaDataParser.parseTag(Array("streamtitle='A';".utf8)) == [])
        #expect(
            IcyMetaDataParser.parseTag([UInt8]("StreamTitle".utf8) + [0] + Array("x='A';".utf8)) == [
                TagItem(.title, "A")
            ])
        // A zero byte ends the value; padding after the last pair is ignored.
        #expect(
            IcyMetaDataParser.parseTag(Array("StreamTitle='A".utf8) + [0] + Array("B';".utf8) + [0, 0]) == [
                TagItem(.title, "A")
            ])
        // Two titles give two items.
        #expect(
            IcyMetaDataParser.parseTag(Array("StreamTitle='A';StreamTitle='B';".utf8))
                == [TagItem(.title, "A"), TagItem(.title, "B")])
        // Invalid UTF-8 becomes `?`, control characters spaces.
        #expect(
            IcyMetaDataParser.parseTag(Array("StreamTitle='a".utf8) + [0xE9, 0x09] + Array("b';".utf8)) == [
                TagItem(.title, "a? b")
            ])
        #expect(IcyMetaDataParser.parseTag([UInt8]()) == [])
        #expect(IcyMetaDataParser.parseTag(Array("=".utf8)) == [])
        #expect(IcyMetaDataParser.parseTag(Array("x='".utf8)) == [])
    }

    @Test func titlesAreConvertedBeforeTheQuotesAreLookedAt() {
        // Latin-1 to UTF-8.
        let latin1: IcyMetaDataParser.Conversion = { bytes in
            Array(String(decoding: bytes.map { UInt16($0) }, as: UTF16.self).utf8)
        }
        #expect(
            IcyMetaDataParser.parseTag(Array("StreamTitle='Caf".utf8) + [0xE9] + Array("';".utf8), convert: latin1)
                == [TagItem(.title, "Café")])
        #expect(
            IcyMetaDataParser.parseTag(Array("StreamTitle=''x'';".utf8), convert: { _ in Array("'y'".utf8) })
                == [TagItem(.title, "y")])
        // A failed conversion drops the title, and parsing goes on after it.
        var calls = 0
        let failingFirst: IcyMetaDataParser.Conversion = { bytes in
            calls += 1
            return calls == 1 ? nil : Array(bytes)
        }
        #expect(
            IcyMetaDataParser.parseTag(Array("StreamTitle='A';StreamTitle='B';".utf8), convert: failingFirst)
                == [TagItem(.title, "B")])
    }

    @Test func metadataIsTakenOutOfTheStreamInAnyPieces() {
        let audio = (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        var stream: [UInt8] = []
        let texts = ["StreamTitle='One';", "", "StreamTitle='Two';StreamUrl='';", ""]
        for index in 0..<10 {
            stream += audio[(index * 400)..<((index + 1) * 400)]
            stream += texts[index % texts.count].isEmpty ? [0] : block(texts[index % texts.count])
        }
        for pieces in [[1], [2, 3], [399], [400], [401], [17, 1000, 5], [stream.count]] {
            let (kept, tags) = parse(stream, metaInterval: 400, pieces: pieces)
            #expect(kept == audio, "pieces \(pieces)")
            // Each non-empty block gives a tag; a parse of more than one block per read keeps the last.
            #expect(tags.allSatisfy { $0 == [TagItem(.title, "One")] || $0 == [TagItem(.title, "Two")] })
            if pieces == [1] {
                #expect(tags.count == 5)
                #expect(tags.first == [TagItem(.title, "One")])
            }
        }
    }

    @Test func aBlockWithoutTitleGivesAnEmptyTag() {
        var stream = [UInt8](repeating: 1, count: 8) + block("StreamUrl='x';") + [UInt8](repeating: 2, count: 8)
        var parser = IcyMetaDataParser(metaInterval: 8)
        let kept = stream.withUnsafeMutableBytes { parser.parseInPlace($0) }
        #expect(kept == 16)
        #expect(Array(stream[0..<16]) == [UInt8](repeating: 1, count: 8) + [UInt8](repeating: 2, count: 8))
        #expect(parser.readTag() == [])
        #expect(parser.readTag() == nil)
    }

    @Test func withoutIntervalEveryByteIsAudio() {
        var parser = IcyMetaDataParser(metaInterval: 0)
        #expect(!parser.isDefined)
        var bytes: [UInt8] = [3, 0x53, 0x74, 0x27]
        #expect(bytes.withUnsafeMutableBytes { parser.parseInPlace($0) } == 4)
        #expect(parser.readTag() == nil)
    }

    @Test func aReadOfMetadataOnlyKeepsNothing() {
        var parser = IcyMetaDataParser(metaInterval: 2)
        var first: [UInt8] = [9, 9]
        #expect(first.withUnsafeMutableBytes { parser.parseInPlace($0) } == 2)
        var metadata = block("StreamTitle='Z';")
        #expect(metadata.withUnsafeMutableBytes { parser.parseInPlace($0) } == 0)
        #expect(parser.readTag() == [TagItem(.title, "Z")])
    }
}
