// SPDX-License-Identifier: GPL-3.0-or-later

import CID3Tag
import Glibc
import Model

// MARK: - Tag mapping, in mpd 0.23's order

extension ID3Tag {
    /// The text frames `mpd` 0.23 maps, in the order it scans them (`scan_id3_tag`); `COMM` is scanned
    /// between `TIT1` and `TPOS`.
    static let textFrameOrder: [(id: String, type: TagType)] = [
        ("TPE1", .artist), ("TPE2", .albumArtist), ("TSOP", .artistSort), ("TSOA", .albumSort),
        ("TSO2", .albumArtistSort), ("TIT2", .title), ("TALB", .album), ("TRCK", .track), ("TDRC", .date),
        ("TDOR", .originalDate), ("TCON", .genre), ("TCOM", .composer), ("TPE3", .conductor),
        ("TPE4", .performer), ("TIT1", .grouping), ("COMM", .comment), ("TPOS", .disc), ("TPUB", .label),
    ]

    /// `TXXX` descriptions `mpd` 0.23 maps to tags (compared case-sensitively).
    static let txxxTags: [(name: String, type: TagType)] = [
        ("ALBUMARTISTSORT", .albumArtistSort),
        ("MusicBrainz Artist Id", .musicBrainzArtistID),
        ("MusicBrainz Album Id", .musicBrainzAlbumID),
        ("MusicBrainz Album Artist Id", .musicBrainzAlbumArtistID),
        ("MusicBrainz Track Id", .musicBrainzTrackID),
        ("MusicBrainz Release Track Id", .musicBrainzReleaseTrackID),
        ("MusicBrainz Work Id", .musicBrainzWorkID),
    ]

    /// The tag items `mpd` 0.23's `scan_id3_tag` hands its tag handler, in the same order.
    ///
    /// Grouped by frame type in a fixed sequence (not in file order): `TPE1`, `TPE2`, `TSOP`, `TSOA`, `TSO2`,
    /// `TIT2`, `TALB`, `TRCK`, `TDRC`, `TDOR`, `TCON`, `TCOM`, `TPE3`, `TPE4`, `TIT1`, `COMM`, `TPOS`, `TPUB`,
    /// then `TXXX` (MusicBrainz ids and `ALBUMARTISTSORT`) and `UFID` (`http://musicbrainz.org`). Within a
    /// type, frames and the strings of a multi-valued frame keep file order. Text and comment values are
    /// stripped of leading and trailing bytes ≤ 0x20; `TCON` numbers become genre names; `TXXX` and `UFID`
    /// values are passed unstripped. Values are raw; `mpd`'s tag builder clean-ups are the caller's.
    public func mpdTagItems() -> [RawTagItem] {
        var items: [RawTagItem] = []
        for (id, type) in Self.textFrameOrder {
            if id == "COMM" {
                self.forEachFrame(id) { self.importComment($0, type, into: &items) }
            } else {
                self.forEachFrame(id) { self.importText($0, type, into: &items) }
            }
        }
        for pair in self.txxxPairs() {
            if let type = Self.txxxTags.first(where: { Array($0.name.utf8) == pair.name })?.type {
                items.append(RawTagItem(type, pair.value))
            }
        }
        self.forEachFrame("UFID") { frame in
            guard let owner = id3_frame_field(frame, 0), let name = id3_field_getlatin1(owner),
                Self.bytes(cString: name) == Array("http://musicbrainz.org".utf8),
                let dataField = id3_frame_field(frame, 1)
            else { return }
            var length: id3_length_t = 0
            guard let data = id3_field_getbinarydata(dataField, &length), length > 0 else { return }
            items.append(RawTagItem(.musicBrainzTrackID, Array(UnsafeBufferPointer(start: data, count: Int(length)))))
        }
        return items
    }

    /// The `TXXX` description/value pairs, in file order, as `mpd` passes them to `OnPair` (UTF-8, unstripped).
    public func txxxPairs() -> [RawTagPair] {
        var pairs: [RawTagPair] = []
        self.forEachFrame("TXXX") { frame in
            guard let name = Self.fieldString(frame, 1), let value = Self.fieldString(frame, 2) else { return }
            pairs.append(RawTagPair(name: name, value: value))
        }
        return pairs
    }

    private func importText(_ frame: UnsafeMutablePointer<id3_frame>, _ type: TagType, into items: inout [RawTagItem]) {
        guard frame.pointee.nfields == 2,
            let encoding = id3_frame_field(frame, 0), encoding.pointee.type == ID3_FIELD_TYPE_TEXTENCODING,
            let list = id3_frame_field(frame, 1), list.pointee.type == ID3_FIELD_TYPE_STRINGLIST
        else { return }
        let count = id3_field_getnstrings(list)
        var index: UInt32 = 0
        while index < count {
            defer { index += 1 }
            guard var ucs4 = id3_field_getstrings(list, index) else { continue }
            if type == .genre, let name = id3_genre_name(ucs4) { ucs4 = name }
            guard let utf8 = Self.utf8(ucs4) else { continue }
            items.append(RawTagItem(type, Self.stripped(utf8)))
        }
    }

    private func importComment(
        _ frame: UnsafeMutablePointer<id3_frame>, _ type: TagType, into items: inout [RawTagItem]
    ) {
        guard frame.pointee.nfields == 4, let field = id3_frame_field(frame, 3),
            let ucs4 = id3_field_getfullstring(field), let utf8 = Self.utf8(ucs4)
        else { return }
        items.append(RawTagItem(type, Self.stripped(utf8)))
    }

    /// `id3_field_getstring` of field `index`, as UTF-8.
    private static func fieldString(_ frame: UnsafeMutablePointer<id3_frame>, _ index: UInt32) -> [UInt8]? {
        guard let field = id3_frame_field(frame, index), let ucs4 = id3_field_getstring(field) else { return nil }
        return Self.utf8(ucs4)
    }

    /// Strips leading and trailing bytes ≤ 0x20, as `mpd`'s `StringView::Strip`.
    static func stripped(_ bytes: [UInt8]) -> [UInt8] {
        guard let first = bytes.firstIndex(where: { $0 > 0x20 }), let last = bytes.lastIndex(where: { $0 > 0x20 })
        else { return [] }
        return Array(bytes[first...last])
    }
}

// MARK: - ReplayGain

extension ID3Tag {
    /// ReplayGain as `mpd` 0.23 reads it from ID3: `TXXX` `replaygain_{track,album}_{gain,peak}` (names
    /// compared case-insensitively, values parsed like `strtof`), falling back to `RVA2` master-volume
    /// adjustments when no `TXXX` matched.
    ///
    /// - Returns: `nil` when the tag has neither.
    public func replayGain() -> ReplayGainInfo? {
        var info = ReplayGainInfo()
        var found = false
        self.forEachFrame("TXXX") { frame in
            guard frame.pointee.nfields >= 3, let fields = frame.pointee.fields,
                let keyUCS4 = id3_field_getstring(fields + 1), let valueUCS4 = id3_field_getstring(fields + 2),
                let key = Self.latin1(keyUCS4), let value = Self.latin1(valueUCS4)
            else { return }
            if ReplayGainParser.apply(name: key, value: value, to: &info) { found = true }
        }
        if found { return info }
        var rva2 = ReplayGainInfo()
        var rva2Found = false
        self.forEachFrame("RVA2") { frame in
            if Self.applyRVA2(frame, to: &rva2) { rva2Found = true }
        }
        return rva2Found ? rva2 : nil
    }

    private static func applyRVA2(_ frame: UnsafeMutablePointer<id3_frame>, to info: inout ReplayGainInfo) -> Bool {
        guard let idField = id3_frame_field(frame, 0), let idPointer = id3_field_getlatin1(idField),
            let dataField = id3_frame_field(frame, 1)
        else { return false }
        var length: id3_length_t = 0
        guard let data = id3_field_getbinarydata(dataField, &length) else { return false }
        let identification = Self.bytes(cString: idPointer)
        let bytes = UnsafeBufferPointer(start: data, count: Int(length))
        var offset = 0
        // Per channel: type, 16-bit signed adjustment × 512, peak bit count, peak bytes.
        while bytes.count - offset >= 4 {
            let peakBytes = (Int(bytes[offset + 3]) + 7) / 8
            if 4 + peakBytes > bytes.count - offset { break }
            if bytes[offset] == 0x01 {
                let raw = Int16(bitPattern: UInt16(bytes[offset + 1]) << 8 | UInt16(bytes[offset + 2]))
                let adjustment = Double(Float(raw) / Float(512))
                if identification == Array("album".utf8) {
                    info.albumGain = adjustment
                } else if identification == Array("track".utf8) {
                    info.trackGain = adjustment
                } else {
                    info.albumGain = adjustment
                    info.trackGain = adjustment
                }
                return true
            }
            offset += 4 + peakBytes
        }
        return false
    }
}

// MARK: - Pictures

extension ID3Tag {
    /// The `APIC` pictures `mpd` 0.23 would offer, in file order: frames whose MIME type is not `-->` (a URL)
    /// and whose data is non-empty. `readpicture` uses the first.
    public func pictures() -> [Picture] {
        var pictures: [Picture] = []
        self.forEachFrame("APIC") { frame in
            guard let mimeField = id3_frame_field(frame, 1) else { return }
            let mime = id3_field_getlatin1(mimeField).map { Self.bytes(cString: $0) }
            if mime == Array("-->".utf8) { return }
            guard let dataField = id3_frame_field(frame, 4), dataField.pointee.type == ID3_FIELD_TYPE_BINARYDATA
            else { return }
            var length: id3_length_t = 0
            guard let data = id3_field_getbinarydata(dataField, &length), length > 0 else { return }
            pictures.append(
                Picture(
                    data: Array(UnsafeBufferPointer(start: data, count: Int(length))),
                    mimeType: mime.map { String(decoding: $0, as: UTF8.self) }))
        }
        return pictures
    }

    /// Whether `pictures()` would return anything, without copying image data.
    public var hasPicture: Bool {
        var found = false
        self.forEachFrame("APIC") { frame in
            guard !found, let mimeField = id3_frame_field(frame, 1) else { return }
            if let mime = id3_field_getlatin1(mimeField), Self.bytes(cString: mime) == Array("-->".utf8) { return }
            guard let dataField = id3_frame_field(frame, 4), dataField.pointee.type == ID3_FIELD_TYPE_BINARYDATA
            else { return }
            var length: id3_length_t = 0
            if id3_field_getbinarydata(dataField, &length) != nil, length > 0 { found = true }
        }
        return found
    }
}
