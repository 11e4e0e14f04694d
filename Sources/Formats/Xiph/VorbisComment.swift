// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Model

/// `mpd`'s rules for Xiph comments (`NAME=value` entries of FLAC, Ogg FLAC, Ogg Vorbis and Opus files): which
/// tag an entry becomes, its `readcomments` pair, ReplayGain, MixRamp, and `METADATA_BLOCK_PICTURE`.
///
/// Pure; any thread. Names are compared ASCII case-insensitively, as `mpd` does.
public enum VorbisComment {
    /// The names `mpd` maps before the canonical tag names (its `xiph_tags` table).
    static let xiphNames: [(name: [UInt8], type: TagType)] = [
        (Array("tracknumber".utf8), .track), (Array("discnumber".utf8), .disc),
        (Array("description".utf8), .comment), (Array("movementname".utf8), .movement),
        (Array("movement".utf8), .movementNumber),
    ]

    /// Every tag type's canonical name, lower-cased, in declaration order.
    static let canonicalNames: [(name: [UInt8], type: TagType)] = TagType.allCases.map { type in
        (Array(type.name.utf8).map(lowercasedASCII), type)
    }

    /// The value of `entry` when its name is `name` (`NAME=value`, name compared ASCII case-insensitively;
    /// `name` must be lower case), as `mpd`'s `GetVorbisCommentValue`.
    public static func value(of entry: ArraySlice<UInt8>, named name: [UInt8]) -> ArraySlice<UInt8>? {
        guard entry.count > name.count, entry[entry.startIndex + name.count] == 0x3D else { return nil }
        var index = entry.startIndex
        for byte in name {
            guard lowercasedASCII(entry[index]) == byte else { return nil }
            index += 1
        }
        return entry[(index + 1)...]
    }

    /// The tag an entry of a FLAC or Vorbis comment block becomes (`mpd`'s `ScanVorbisComment`): first the
    /// `xiph_tags` names (`tracknumber`, `discnumber`, `description`, `movementname`, `movement`), then the
    /// canonical tag names; `nil` for any other name.
    public static func tagItem(_ entry: ArraySlice<UInt8>) -> RawTagItem? {
        Self.rawTagItem(entry)
    }

    /// The tags a decoder reports for a stream's comment entries (`mpd`'s `SubmitTag` of the comments it read),
    /// mapped as the scanner maps them; `nil` when none is a tag.
    public static func streamTags(_ entries: [[UInt8]]) -> [TagItem]? {
        let tags = TagCollector.tagItems(entries.compactMap { Self.rawTagItem($0[...]) })
        return tags.isEmpty ? nil : tags
    }

    private static func rawTagItem(_ entry: ArraySlice<UInt8>) -> RawTagItem? {
        for (name, type) in self.xiphNames {
            if let value = self.value(of: entry, named: name) { return RawTagItem(type, Array(value)) }
        }
        for (name, type) in self.canonicalNames {
            if let value = self.value(of: entry, named: name) { return RawTagItem(type, Array(value)) }
        }
        return nil
    }

    /// The tag an Opus comment name maps to (`mpd`'s `ParseOpusTagName`): the canonical names first, then
    /// the `xiph_tags` table, so `MOVEMENT` is `Movement` in Opus but `MovementNumber` in FLAC and Vorbis.
    public static func opusTagType(name: ArraySlice<UInt8>) -> TagType? {
        let lowered = name.map(lowercasedASCII)
        if let found = self.canonicalNames.first(where: { $0.name == lowered }) { return found.type }
        return self.xiphNames.first(where: { $0.name == lowered })?.type
    }

    /// The `readcomments` pair of an entry: split at the first `=`; `nil` without one or with an empty name.
    public static func pair(_ entry: ArraySlice<UInt8>) -> (name: ArraySlice<UInt8>, value: ArraySlice<UInt8>)? {
        guard let equals = entry.firstIndex(of: 0x3D), equals != entry.startIndex else { return nil }
        return (entry[..<equals], entry[(equals + 1)...])
    }

    /// Whether an entry is a `CUESHEET` pair (name compared ASCII case-insensitively, any value), which makes
    /// `mpd`'s tag handler mark the song as holding a playlist (`has_playlist`).
    public static func isCuesheet(_ entry: ArraySlice<UInt8>) -> Bool {
        guard let pair = self.pair(entry) else { return false }
        return pair.name.map(lowercasedASCII).elementsEqual("cuesheet".utf8)
    }

    /// Applies a `REPLAYGAIN_*` entry (`mpd`'s `ParseReplayGainVorbis`).
    ///
    /// - Returns: whether the entry was one of the four ReplayGain names.
    @discardableResult
    public static func applyReplayGain(_ entry: ArraySlice<UInt8>, to info: inout ReplayGainInfo) -> Bool {
        guard let (name, value) = self.pair(entry) else { return false }
        return ReplayGainParser.apply(name: Array(name), value: Array(value), to: &info)
    }

    /// The value of a `MIXRAMP_START` or `MIXRAMP_END` entry (`mpd`'s `ParseMixRampVorbis`).
    public static func mixRamp(_ entry: ArraySlice<UInt8>) -> (start: String?, end: String?) {
        if let value = self.value(of: entry, named: Array("mixramp_start".utf8)) {
            return (String(decoding: value, as: UTF8.self), nil)
        }
        if let value = self.value(of: entry, named: Array("mixramp_end".utf8)) {
            return (nil, String(decoding: value, as: UTF8.self))
        }
        return (nil, nil)
    }

    /// The picture of a `METADATA_BLOCK_PICTURE` value (`mpd`'s `ScanVorbisPicture`): base64 of a FLAC
    /// PICTURE block; values over 1 MiB are ignored, as `mpd` ignores them.
    public static func picture(base64 value: ArraySlice<UInt8>) -> Picture? {
        guard value.count <= 1 << 20, let block = Base64.decode(value) else { return nil }
        return PictureBlock.picture(block[...])
    }
}

/// ASCII lower case of one byte.
@inline(__always)
func lowercasedASCII(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
