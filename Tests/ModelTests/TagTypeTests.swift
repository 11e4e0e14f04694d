import Testing

@testable import Model

struct TagTypeTests {
    @Test func thirtyOneTagsInMPDOrder() {
        #expect(TagType.allCases.count == 31)
        #expect(TagType.allCases.first?.name == "Artist")
        #expect(TagType.allCases.last?.name == "MUSICBRAINZ_WORKID")
    }

    @Test(arguments: ["albumartist", "AlbumArtist", "ALBUMARTIST", "aLbUmArTiSt"])
    func parsesCaseInsensitively(_ text: String) {
        #expect(TagType(parsing: text) == .albumArtist)
    }

    @Test func exactNameIsCaseSensitive() {
        #expect(TagType(exactName: "Artist") == .artist)
        #expect(TagType(exactName: "artist") == nil)
    }

    @Test func defaultMetadataLacksCommentOnly() {
        #expect(Array(TagMask.defaultMetadata).count == 30)
        #expect(!TagMask.defaultMetadata.contains(.comment))
    }
}
