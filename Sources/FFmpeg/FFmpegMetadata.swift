// SPDX-License-Identifier: GPL-3.0-or-later

import CFFmpeg
import Glibc

/// One entry of an FFmpeg metadata dictionary (`AVDictionaryEntry`): the key and value bytes as the demuxer
/// stored them (FFmpeg's keys are its own generic names: `title`, `album_artist`, `major_brand`…).
public struct FFmpegMetadataEntry: Sendable, Hashable {
    /// The key bytes.
    public var key: [UInt8]
    /// The value bytes.
    public var value: [UInt8]

    /// Creates an entry.
    public init(key: [UInt8], value: [UInt8]) {
        self.key = key
        self.value = value
    }
}

/// An FFmpeg metadata dictionary copied out of FFmpeg, in FFmpeg's iteration order.
///
/// Pure value; any thread.
public struct FFmpegMetadata: Sendable, Hashable {
    /// Every entry, in the order `av_dict_get(dict, "", previous, AV_DICT_IGNORE_SUFFIX)` visits them.
    public var entries: [FFmpegMetadataEntry]

    /// Creates a dictionary from entries.
    public init(_ entries: [FFmpegMetadataEntry] = []) { self.entries = entries }

    /// The values whose key equals `key` ASCII case-insensitively, in order: what successive
    /// `av_dict_get(dict, key, previous, 0)` calls return.
    public func values(forKey key: some Collection<UInt8>) -> [[UInt8]] {
        let wanted = key.map(upperASCII)
        return self.entries.filter { $0.key.count == wanted.count && $0.key.map(upperASCII) == wanted }.map(\.value)
    }

    /// Copies a dictionary out of FFmpeg (empty for `nil`).
    init(copying dictionary: OpaquePointer?, _ ffmpeg: fermata_ffmpeg_functions) {
        var entries: [FFmpegMetadataEntry] = []
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while true {
            entry = ffmpeg.av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX)
            guard let current = entry else { break }
            entries.append(FFmpegMetadataEntry(key: bytes(current.pointee.key), value: bytes(current.pointee.value)))
        }
        self.entries = entries
    }
}

/// The bytes of a C string (empty for `nil`).
private func bytes(_ text: UnsafeMutablePointer<CChar>?) -> [UInt8] {
    guard let text else { return [] }
    return Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
}

/// ASCII upper case of one byte (FFmpeg's `av_toupper`).
@inline(__always)
private func upperASCII(_ byte: UInt8) -> UInt8 { byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte }
