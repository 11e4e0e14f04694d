// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `mp3`: the input is a `.mp3` file. It is written to a scratch file, opened with the playback
// decoder (`MP3Format.makeDecoder`, libmpg123 behind it) and decoded as the player does: a bounded number of
// `decode(into:)` calls, then seeks to the start, the middle, past the end and to a frame taken from the
// input, each followed by a few more decodes. Every call must return whole frames within the buffer.

import Formats
import Model

/// The player's decode buffer size, in bytes.
private let bufferBytes = 16 * 1024
nonisolated(unsafe) private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferBytes, alignment: 16)  // reason: libFuzzer calls on one thread

/// Decodes at most `calls` times; returns the frames decoded, or `nil` after an error.
private func decode(_ decoder: inout any Decoder, calls: Int) -> Int? {
    var total = 0
    for _ in 0..<calls {
        guard let frames = try? decoder.decode(into: buffer) else { return nil }
        precondition(frames >= 0 && frames * decoder.format.frameSize <= bufferBytes, "decoded past the buffer")
        if frames == 0 { break }
        total += frames
    }
    return total
}

@_cdecl("LLVMFuzzerTestOneInput")
public func mp3FuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let path = FuzzScratch.write(input, to: "input.mp3")
    guard var decoder = try? MP3Format().makeDecoder(path: path) else { return 0 }
    precondition(decoder.format.sampleRate > 0 && decoder.format.channels > 0, "an empty audio format")
    _ = decode(&decoder, calls: 200)
    let total = decoder.totalFrames ?? 0
    let chosen = input.count >= 4 ? UInt64(input.loadUnaligned(fromByteOffset: input.count - 4, as: UInt32.self)) : 1
    for frame in [0, total / 2, total + 1000, chosen] {
        guard (try? decoder.seek(toFrame: frame)) != nil else { continue }
        _ = decode(&decoder, calls: 8)
    }
    return 0
}
