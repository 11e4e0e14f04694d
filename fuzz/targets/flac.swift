// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `flac`: the input is a FLAC file. It is written to a scratch file twice, as `input.flac` for the
// `flac` plugin and as `input.oga` for the `oggflac` plugin (so Ogg FLAC inputs reach libFLAC's Ogg layer),
// and each is read as the daemon reads songs: `readInfo`, `readPicture`, `readComments` (libFLAC's metadata
// chain), then the playback decoder (libFLAC's stream decoder through an `InputStream`): a bounded number of
// `decode(into:)` calls, then seeks to the start, the middle, past the end and to a frame taken from the
// input, each followed by a few more decodes. Every call must return whole frames within the buffer.

import Formats
import Model

/// The player's decode buffer size, in bytes (odd, so frames end inside it).
private let bufferBytes = 16 * 1024 + 12
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

private func exercise(_ format: some FormatPlugin, path: String, chosen: UInt64) {
    if let info = try? format.readInfo(path: path) {
        precondition(info.audioFormat.map { $0.sampleRate > 0 && $0.channels > 0 } ?? true, "an empty audio format")
    }
    _ = try? format.readPicture(path: path)
    _ = try? format.readComments(path: path)
    guard var decoder = try? format.makeDecoder(path: path) else { return }
    precondition(decoder.format.sampleRate > 0 && decoder.format.channels > 0, "an empty audio format")
    _ = decode(&decoder, calls: 200)
    let total = decoder.totalFrames ?? 0
    for frame in [0, total / 2, total + 1000, chosen] {
        guard (try? decoder.seek(toFrame: frame)) != nil else { continue }
        _ = decode(&decoder, calls: 8)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func flacFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let chosen = input.count >= 4 ? UInt64(input.loadUnaligned(fromByteOffset: input.count - 4, as: UInt32.self)) : 1
    exercise(FLACFormat(), path: FuzzScratch.write(input, to: "input.flac"), chosen: chosen)
    exercise(OggFLACFormat(), path: FuzzScratch.write(input, to: "input.oga"), chosen: chosen)
    return 0
}
