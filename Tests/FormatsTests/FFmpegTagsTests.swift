// SPDX-License-Identifier: GPL-3.0-or-later

import FFmpeg
import Formats
import ID3Tag
import Model
import Testing

@Suite struct FFmpegTagsTests {
    static func dictionary(_ pairs: [(String, String)]) -> FFmpegMetadata {
        FFmpegMetadata(pairs.map { FFmpegMetadataEntry(key: Array($0.0.utf8), value: Array($0.1.utf8)) })
    }

    static func items(_ container: [(String, String)], _ stream: [(String, String)] = []) -> [String] {
        TagCollector.tagItems(
            FFmpegTags.tagItems(container: Self.dictionary(container), stream: Self.dictionary(stream))
        )
        .map { "\($0.type.name)=\($0.value)" }
    }

    /// Dictionary entries (`key=value`, one per line) and the tags `mpd` makes of them.
    static let table: [(entries: String, tags: [String])] = [
        ("title=T\nartist=A", ["Artist=A", "Title=T"]),
        ("ARTIST=x\nArtist=y", ["Artist=x", "Artist=y"]),
        ("album_artist=AA\nalbumartist=B", ["AlbumArtist=B", "AlbumArtist=AA"]),
        ("sort_artist=s1\nartist-sort=s2\nartistsort=s3", ["ArtistSort=s3", "ArtistSort=s2", "ArtistSort=s1"]),
        ("sort_album=a1\nalbum-sort=a2\nsort_album_artist=aa", ["AlbumSort=a2", "AlbumArtistSort=aa", "AlbumSort=a1"]),
        ("ALBUMARTISTSORT=z", ["AlbumArtistSort=z", "AlbumArtistSort=z"]),
        ("MusicBrainz Track Id=id1\nmusicbrainz_trackid=id2", ["MUSICBRAINZ_TRACKID=id2", "MUSICBRAINZ_TRACKID=id1"]),
        ("track=03/12\ndisc=1/2\ndate=2021", ["Track=3", "Date=2021", "Disc=1"]),
        ("track=0\ncomment=c\ndescription=d", ["Comment=c"]),
        ("sort_name=x\nmajor_brand=M4A \nencoder=Lavf\ntitle-sort=t", []),
        (
            "composer=C\nperformer=P\ngrouping=G\nlabel=L\ngenre=g",
            ["Genre=g", "Composer=C", "Performer=P", "Grouping=G", "Label=L"]
        ),
        ("title=bad\u{01}value", ["Title=bad value"]),
    ]

    /// mpd's mapping, as its `FfmpegScanDictionary` walks it: canonical names in tag order, then FFmpeg's own
    /// names, then the MusicBrainz names; within one name, dictionary order; keys case-insensitive.
    @Test func mappingTable() {
        for (entries, tags) in Self.table {
            let pairs = entries.split(separator: "\n").map { line -> (String, String) in
                let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (String(parts[0]), String(parts[1]))
            }
            #expect(Self.items(pairs) == tags, "\(entries)")
        }
    }

    @Test func containerBeforeStream() {
        #expect(
            Self.items([("title", "C")], [("title", "S"), ("artist", "SA")]) == ["Title=C", "Artist=SA", "Title=S"])
    }

    @Test func invalidUTF8BecomesQuestionMarks() {
        let dictionary = FFmpegMetadata([FFmpegMetadataEntry(key: Array("title".utf8), value: [0x41, 0xFF, 0x42])])
        let items = TagCollector.tagItems(FFmpegTags.tagItems(container: dictionary, stream: FFmpegMetadata()))
        #expect(items == [TagItem(.title, "A?B")])
    }

    @Test func commentsAreEveryEntryContainerFirst() {
        let pairs = FFmpegTags.pairs(
            container: Self.dictionary([("major_brand", "M4A "), ("title", "T")]),
            stream: Self.dictionary([("handler_name", "SoundHandler"), ("vendor_id", "[0][0][0][0]")]))
        #expect(
            pairs.map { "\($0.name)=\($0.value)" } == [
                "major_brand=M4A ", "title=T", "handler_name=SoundHandler", "vendor_id=[0][0][0][0]",
            ])
    }

    @Test func replayGainFromEitherDictionaryLaterWins() {
        let info = FFmpegTags.replayGain(
            container: Self.dictionary([("REPLAYGAIN_TRACK_GAIN", "-6.5 dB"), ("replaygain_album_peak", "0.9")]),
            stream: Self.dictionary([("replaygain_track_gain", "-3 dB"), ("title", "x")]))
        #expect(info.trackGain == -3)
        #expect(info.albumPeak.map { Float($0) } == Float(0.9))
        #expect(info.trackPeak == nil)
        #expect(info.albumGain == nil)
    }

    @Test func mixRampStartAndEndEmptyIgnored() {
        let ramp = FFmpegTags.mixRamp(
            container: Self.dictionary([("MIXRAMP_START", "-20 0.1"), ("mixramp_end", "")]),
            stream: Self.dictionary([("mixramp_end", "-10 1.5")]))
        #expect(ramp.start == "-20 0.1")
        #expect(ramp.end == "-10 1.5")
        let none = FFmpegTags.mixRamp(container: Self.dictionary([("mixramp_start", "")]), stream: FFmpegMetadata())
        #expect(none.start == nil && none.end == nil)
    }
}
