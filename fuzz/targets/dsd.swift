// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `dsd`: the input is a DSF or DSDIFF file. Both plugins read it: written to a scratch file for
// `readInfo`, `readPicture` and `readComments` (header chunks, the ID3 tag, DSDIFF's native tags found by mpd
// 0.23.12's skips), then decoded from memory as the player does: a bounded number of `decode(into:)` calls,
// then seeks to the start, the middle, past the end and to a frame taken from the input, each followed by a
// few more decodes. Every call must return whole frames within the buffer.

import Formats
import Input
import Model

/// The player's decode buffer size, in bytes.
private let bufferBytes = 16 * 1024
// reason: libFuzzer calls on one thread
nonisolated(unsafe) private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferBytes, alignment: 16)

/// Decodes at most `calls` times.
private func decode(_ decoder: inout any Decoder, calls: Int) {
    for _ in 0..<calls {
        guard let frames = try? decoder.decode(into: buffer) else { return }
        precondition(frames >= 0 && frames * decoder.format.frameSize <= bufferBytes, "decoded past the buffer")
        if frames == 0 { return }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func dsdFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let bytes = Array(input)
    let plugins: [(any FormatPlugin, String)] = [(DSFFormat(), "input.dsf"), (DSDIFFFormat(), "input.dff")]
    for (plugin, name) in plugins {
        let path = FuzzScratch.write(input, to: name)
        if let info = try? plugin.readInfo(path: path) {
            precondition(info.audioFormat == nil, "DSD scans report no format")
        }
        _ = try? plugin.readPicture(path: path)
        _ = try? plugin.readComments(path: path)
        guard var decoder = try? plugin.makeDecoder(input: MemoryInputStream(bytes)) else { continue }
        precondition(decoder.format.sampleFormat == .dsd && decoder.format.channels > 0, "not DSD")
        decode(&decoder, calls: 64)
        let total = decoder.totalFrames ?? 0
        let chosen =
            bytes.count >= 4 ? UInt64(input.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self)) : 1
        for frame in [0, total / 2, total + 1000, chosen] {
            guard (try? decoder.seek(toFrame: frame)) != nil else { continue }
            decode(&decoder, calls: 8)
        }
    }
    return 0
}
