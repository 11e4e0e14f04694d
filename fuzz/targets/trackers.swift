// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `trackers`: the input's first byte picks a suffix (nsf, spc, vgm, gbs, kss, hes, ay, sap, mod,
// xm, s3m, it, dfm…), the rest is the file. It is written to a scratch file and read as the daemon does:
// `readInfo` and `containerSongs` (gme's container scan), then the playback decoder of the file and of each of
// its first container songs (virtual `tune_00N` paths): bounded `decode(into:)` calls, seeks to the start, the
// middle and past the end (within 3 s), each followed by a few decodes. Every call must return whole frames within the
// buffer.

import Formats
import Model

private let suffixes = [
    "nsf", "nsfe", "spc", "vgm", "vgz", "gbs", "kss", "hes", "ay", "sap", "gym", "mod", "xm", "s3m", "it",
    "dfm", "mptm", "669", "stm", "mtm",
]

private func exercise(_ decoder: inout any Decoder) {
    precondition(decoder.format.sampleRate > 0 && decoder.format.channels > 0, "an empty audio format")
    fuzzDecode(&decoder, calls: 40)
    // libgme seeks by emulating up to the target: keep seeks within a few seconds so each input stays fast.
    let total = decoder.totalFrames ?? 0
    let few = UInt64(decoder.format.sampleRate) * 3
    for frame in [0, min(total / 2, few), total < few ? total + 1000 : few] {
        guard (try? decoder.seek(toFrame: frame)) != nil else { continue }
        fuzzDecode(&decoder, calls: 4)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func trackersFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let first = input.first else { return 0 }
    let suffix = suffixes[Int(first) % suffixes.count]
    let path = FuzzScratch.write(UnsafeRawBufferPointer(rebasing: input.dropFirst()), to: "input." + suffix)
    let songs = fuzzFileAndContainerSongs(path, exercise: exercise)
    precondition(songs.count != 1, "a container of one song")
    return 0
}
