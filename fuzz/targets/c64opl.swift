// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `c64opl`: the input's first byte picks a suffix of the sidplay plugin (sid, mus, str, prg, P00)
// or the adplug plugin (raw, hsc, d00, rad, amd, laa, sa2), the rest is the file. It is written to a scratch
// file and read as the daemon does: `readInfo`, `readComments` and `containerSongs` (sidplay's container scan:
// every tune), then the playback decoder of the file and of its first two container songs (virtual
// `tune_00N.sid` paths): 40 decodes, and for seekable decoders seeks to the start and 2 s in, each followed by
// 4 decodes. Every call must return whole frames within the buffer.

import Formats
import Model

private let suffixes = ["sid", "mus", "str", "prg", "P00", "raw", "hsc", "d00", "rad", "amd", "laa", "sa2"]

private func exercise(_ decoder: inout any Decoder) {
    precondition(decoder.format.sampleRate > 0 && decoder.format.channels > 0, "an empty audio format")
    fuzzDecode(&decoder, calls: 40)
    guard decoder.isSeekable else { return }
    // libsidplayfp seeks by emulating up to the target: keep seeks within 2 s so each input stays fast.
    for frame in [0, UInt64(decoder.format.sampleRate) * 2] {
        guard (try? decoder.seek(toFrame: frame)) != nil else { continue }
        fuzzDecode(&decoder, calls: 4)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func c64oplFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let first = input.first else { return 0 }
    let suffix = suffixes[Int(first) % suffixes.count]
    let path = FuzzScratch.write(UnsafeRawBufferPointer(rebasing: input.dropFirst()), to: "input." + suffix)
    let songs = fuzzFileAndContainerSongs(path, exercise: exercise)
    precondition(songs.allSatisfy { $0.name.hasSuffix(".sid") }, "a container song not named tune_00N.sid")
    return 0
}
