// SPDX-License-Identifier: GPL-3.0-or-later

import FFmpeg
import ID3Tag
import Model
import RawText

/// `mpd`'s rules for FFmpeg metadata (`FfmpegMetaData.cxx` and the plugin's ReplayGain/MixRamp parsing):
/// which tags, `readcomments` pairs, ReplayGain and MixRamp values the container's and the audio stream's
/// dictionaries give.
///
/// Pure; any thread. Dictionary keys are compared ASCII case-insensitively, as `av_dict_get` does.
public enum FFmpegTags {
    /// FFmpeg's own key names `mpd` maps after the canonical tag names (its `ffmpeg_tags` table).
    static let ffmpegNames: [(name: String, type: TagType)] = [
        ("album_artist", .albumArtist), ("album-sort", .albumSort), ("artist-sort", .artistSort),
        ("sort_album_artist", .albumArtistSort), ("sort_album", .albumSort), ("sort_artist", .artistSort),
    ]

    /// The ID3 `TXXX` descriptions `mpd` also looks up in FFmpeg dictionaries (`musicbrainz_txxx_tags`).
    static let musicBrainzNames: [(name: String, type: TagType)] = [
        ("ALBUMARTISTSORT", .albumArtistSort), ("MusicBrainz Artist Id", .musicBrainzArtistID),
        ("MusicBrainz Album Id", .musicBrainzAlbumID), ("MusicBrainz Album Artist Id", .musicBrainzAlbumArtistID),
        ("MusicBrainz Track Id", .musicBrainzTrackID), ("MusicBrainz Release Track Id", .musicBrainzReleaseTrackID),
        ("MusicBrainz Work Id", .musicBrainzWorkID),
    ]

    /// The tag items of one dictionary, as `mpd`'s `FfmpegScanDictionary` reports them: grouped by name,
    /// not in dictionary order — every tag type's canonical name (`Artist`, `Title`, `Track`…, in `mpd`'s
    /// tag order), then FFmpeg's names (`album_artist`, `sort_artist`…), then the MusicBrainz names; within a
    /// name, dictionary order.
    public static func tagItems(_ dictionary: FFmpegMetadata) -> [RawTagItem] {
        var items: [RawTagItem] = []
        for type in TagType.allCases {
            for value in dictionary.values(forKey: type.name.utf8) { items.append(RawTagItem(type, value)) }
        }
        for (name, type) in self.ffmpegNames + self.musicBrainzNames {
            for value in dictionary.values(forKey: name.utf8) { items.append(RawTagItem(type, value)) }
        }
        return items
    }

    /// The tag items of a file: the container's dictionary, then the audio stream's.
    public static func tagItems(container: FFmpegMetadata, stream: FFmpegMetadata) -> [RawTagItem] {
        self.tagItems(container) + self.tagItems(stream)
    }

    /// The `readcomments` pairs: every entry of the container's dictionary, then of the audio stream's, in
    /// dictionary order (FFmpeg's own fields such as `major_brand` included).
    public static func pairs(container: FFmpegMetadata, stream: FFmpegMetadata) -> [(name: String, value: String)] {
        (container.entries + stream.entries).map {
            (RawText.decode($0.key), RawText.decode($0.value))
        }
    }

    /// The ReplayGain values of the container's then the stream's entries (`replaygain_track_gain`…, names
    /// compared ASCII case-insensitively; values parsed like `strtof`), later entries overriding earlier ones.
    public static func replayGain(container: FFmpegMetadata, stream: FFmpegMetadata) -> ReplayGainInfo {
        var info = ReplayGainInfo()
        for entry in container.entries + stream.entries {
            _ = ReplayGainParser.apply(name: entry.key, value: entry.value, to: &info)
        }
        return info
    }

    /// The MixRamp values (`mixramp_start`, `mixramp_end`, names compared ASCII case-insensitively, empty
    /// values ignored) of the entries that are not ReplayGain names, later ones overriding earlier ones.
    public static func mixRamp(container: FFmpegMetadata, stream: FFmpegMetadata) -> (start: String?, end: String?) {
        var start: String?
        var end: String?
        var scratch = ReplayGainInfo()
        for entry in container.entries + stream.entries where !entry.value.isEmpty {
            if ReplayGainParser.apply(name: entry.key, value: entry.value, to: &scratch) { continue }
            let name = String(decoding: entry.key.map(lowercasedASCII), as: UTF8.self)
            let value = String(decoding: entry.value, as: UTF8.self)
            if name == "mixramp_start" {
                start = value
            } else if name == "mixramp_end" {
                end = value
            }
        }
        return (start, end)
    }
}
