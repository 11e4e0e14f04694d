// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `mpcfaad`: the input is a Musepack or raw AAC file (a first byte below 0x80 makes it `.mpc`, else
// `.aac`; the rest is the file). It is written to a scratch file and read as the daemon reads it: `readInfo`,
// `readPicture`, `readComments` through the registry (libmpcdec's stream header, mpd's ADTS frame count and ADIF
// bit rate, libfaad's initialisation, the generic APE/ID3 scan), then the playback decoder: up to 200
// `decode(into:)` calls, and for Musepack seeks to 0, the middle, past the end and a sample from the input, each
// followed by a few decodes. Every call must return whole frames within the buffer.

import Formats
import Input
import Model

/// The player's decode buffer size, in bytes.
private let bufferBytes = 16 * 1024
// nonisolated(unsafe): libFuzzer calls the target on one thread.
nonisolated(unsafe) private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferBytes, alignment: 16)

private func decode(_ decoder: inout any Decoder, calls: Int) {
    for _ in 0..<calls {
        guard let frames = try? decoder.decode(into: buffer) else { return }
        precondition(frames >= 0 && frames * decoder.format.frameSize <= bufferBytes, "decoded past the buffer")
        if frames == 0 { return }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func mpcfaadFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let selector = input.first else { return 0 }
    let musepack = selector < 0x80
    let rest = UnsafeRawBufferPointer(rebasing: input[1...])
    let file = [UInt8](rest)
    let path = FuzzScratch.write(rest, to: musepack ? "input.mpc" : "input.aac")
    let plugin: any FormatPlugin = musepack ? MusepackFormat() : FAADFormat()
    let registry = FormatRegistry([plugin])
    if let info = try? registry.readInfo(path: path) {
        precondition(info.audioFormat == nil, "mpd's mpcdec and faad scans report no format")
    }
    _ = try? registry.readPicture(path: path)
    _ = try? registry.readComments(path: path)
    guard var decoder = try? plugin.makeDecoder(input: MemoryInputStream(file)) else { return 0 }
    precondition(decoder.format.sampleRate > 0 && decoder.format.channels > 0, "an empty audio format")
    decode(&decoder, calls: 200)
    guard musepack else { return 0 }
    let total = decoder.totalFrames ?? 0
    let chosen = input.count >= 4 ? UInt64(input.loadUnaligned(fromByteOffset: input.count - 4, as: UInt32.self)) : 1
    for frame in [0, total / 2, total + 1000, chosen] {
        guard (try? decoder.seek(toFrame: frame)) != nil else { continue }
        decode(&decoder, calls: 8)
    }
    return 0
}
