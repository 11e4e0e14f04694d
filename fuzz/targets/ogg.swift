// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `ogg`: the input is an Ogg file (Vorbis or Opus). It is written to a scratch file and read as the
// daemon reads `.ogg` and `.opus` songs: `readInfo`, `readPicture` and `readComments` of the vorbis and opus
// plugins (libogg's page walk, libvorbis's header parsing, `mpd`'s OpusHead/OpusTags parsing, Vorbis comments,
// METADATA_BLOCK_PICTURE), then each plugin's playback decoder: a bounded number of `decode(into:)` calls, and
// seeks to the start, the middle, past the end and to a frame taken from the input, each followed by a few more
// decodes. Every call must return whole frames within the buffer.

import Formats
import Model

/// The player's decode buffer size, in bytes.
private let bufferBytes = 16 * 1024
// reason: libFuzzer calls on one thread
nonisolated(unsafe) private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferBytes, alignment: 16)

/// Decodes at most `calls` times; stops at the end or an error.
private func decode(_ decoder: inout any Decoder, calls: Int) {
    for _ in 0..<calls {
        guard let frames = try? decoder.decode(into: buffer) else { return }
        precondition(frames >= 0 && frames * decoder.format.frameSize <= bufferBytes, "decoded past the buffer")
        if frames == 0 { return }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func oggFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let path = FuzzScratch.write(input, to: "input.ogg")
    let plugins: [any FormatPlugin] = [VorbisFormat(), OpusFormat()]
    for plugin in plugins {
        if let info = try? plugin.readInfo(path: path) {
            precondition(info.audioFormat.map { $0.sampleRate > 0 && $0.channels > 0 } ?? true, "empty format")
        }
        _ = try? plugin.readPicture(path: path)
        _ = try? plugin.readComments(path: path)
        guard var decoder = try? plugin.makeDecoder(path: path) else { continue }
        precondition(decoder.format.sampleRate > 0 && decoder.format.channels > 0, "an empty audio format")
        decode(&decoder, calls: 100)
        let total = decoder.totalFrames ?? 0
        let chosen =
            input.count >= 4 ? UInt64(input.loadUnaligned(fromByteOffset: input.count - 4, as: UInt32.self)) : 1
        for frame in [0, total / 2, total + 1000, chosen] {
            guard (try? decoder.seek(toFrame: frame)) != nil else { continue }
            decode(&decoder, calls: 8)
        }
    }
    return 0
}
