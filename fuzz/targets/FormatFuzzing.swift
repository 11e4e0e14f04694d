// SPDX-License-Identifier: GPL-3.0-or-later

// Helpers shared by the fuzz targets that read song files (see FORMAT_TARGETS in fuzz/build.sh): playing a
// decoder the way the player does, with a check that every call stays inside its buffer.

import Formats

/// The decode buffer's size: the player's 16 KiB plus 12 bytes, so that frames of most sizes end inside it.
private let bufferBytes = 16 * 1024 + 12
// reason: libFuzzer calls the target on one thread only.
nonisolated(unsafe) private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferBytes, alignment: 16)

/// Decodes at most `calls` times, checking that each call wrote whole frames inside the buffer.
///
/// - Returns: `false` after a decoding error, `true` at the end or after `calls` calls.
@discardableResult
func fuzzDecode(_ decoder: inout any Decoder, calls: Int) -> Bool {
    for _ in 0..<calls {
        guard let frames = try? decoder.decode(into: buffer) else { return false }
        precondition(frames >= 0 && frames * decoder.format.frameSize <= bufferBytes, "decoded past the buffer")
        if frames == 0 { break }
    }
    return true
}

/// A frame number taken from the input's last 4 bytes (1 for a shorter input), so seeks reach odd places.
func fuzzChosenFrame(_ input: UnsafeRawBufferPointer) -> UInt64 {
    input.count >= 4 ? UInt64(input.loadUnaligned(fromByteOffset: input.count - 4, as: UInt32.self)) : 1
}

/// Plays `decoder` as the player may: `calls` decodes, then (when `seeks`) seeks to the start, the middle, past
/// the end and to `chosen`, each followed by `callsAfterSeek` decodes.
func fuzzPlay(
    _ decoder: inout any Decoder, calls: Int = 200, callsAfterSeek: Int = 8, chosen: UInt64, seeks: Bool = true
) {
    precondition(decoder.format.sampleRate > 0 && decoder.format.channels > 0, "an empty audio format")
    fuzzDecode(&decoder, calls: calls)
    guard seeks else { return }
    let total = decoder.totalFrames ?? 0
    for frame in [0, total / 2, total &+ 1000, chosen] {
        guard (try? decoder.seek(toFrame: frame)) != nil else { continue }
        fuzzDecode(&decoder, calls: callsAfterSeek)
    }
}

/// Reads the file at `path` as the daemon does (`readInfo`, `readComments`, `containerSongs`), then plays the
/// file and its first two container songs (their `readInfo` too) with `exercise`.
///
/// - Returns: the container songs.
@discardableResult
func fuzzFileAndContainerSongs(_ path: String, exercise: (inout any Decoder) -> Void) -> [ContainerSong] {
    let registry = FormatRegistry.standard
    _ = try? registry.readInfo(path: path)
    _ = try? registry.readComments(path: path)
    let songs = registry.containerSongs(path: path) ?? []
    if var decoder = try? registry.openDecoder(path: path) { exercise(&decoder) }
    for song in songs.prefix(2) {
        _ = try? registry.readInfo(path: path + "/" + song.name)
        if var decoder = try? registry.openDecoder(path: path + "/" + song.name) { exercise(&decoder) }
    }
    return songs
}
