// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `synth`: the plugins that synthesise their output, mikmod and fluidsynth. The input's first byte
// picks the suffix (even: `stx`, which only mikmod claims; odd: `mid`), the rest is the file, written to a
// scratch file and read as the daemon does: `FormatRegistry.standard` `readInfo`, `readComments`, then the
// playback decoder (libmikmod's loaders and software mixer; for MIDI, libfluidsynth's header check, and its
// decoder, which fails at once here without mpd's default SoundFont) with 40 decodes and a seek, which must
// fail. Every call must return whole frames within the buffer.

import Formats

@_cdecl("LLVMFuzzerTestOneInput")
public func synthFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let first = input.first else { return 0 }
    let name = first % 2 == 0 ? "input.stx" : "input.mid"
    let path = FuzzScratch.write(UnsafeRawBufferPointer(rebasing: input.dropFirst()), to: name)
    let registry = FormatRegistry.standard
    _ = try? registry.readInfo(path: path)
    _ = try? registry.readComments(path: path)
    if var decoder = try? registry.openDecoder(path: path) {
        precondition(decoder.format.sampleRate > 0 && decoder.format.channels > 0, "an empty audio format")
        precondition(!decoder.isSeekable && decoder.totalFrames == nil, "a synthesised song with a length")
        fuzzDecode(&decoder, calls: 40)
        precondition((try? decoder.seek(toFrame: 0)) == nil, "a seek that should fail")
        fuzzDecode(&decoder, calls: 4)
    }
    return 0
}
