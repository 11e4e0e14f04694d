// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `pcmstream`: the input is a MIME type (with its `rate=`, `channels=`, `format=` parameters), a NUL
// byte, then raw stream data. `FormatRegistry.standard.openDecoder(input:)` picks the plugins for the MIME type
// (the `pcm` plugin for `audio/L16`…) over a `MemoryInputStream` of the data, and the decoder is played as the
// player does: up to 64 decodes, then seeks to 0, the middle, past the end and a frame from the input's last 4
// bytes. Every call must return whole frames within the buffer; a MIME type the pcm plugin takes must give a
// format with a rate and channels.

import Formats
import Input
import Model

@_cdecl("LLVMFuzzerTestOneInput")
public func pcmStreamFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let bytes = Array(input)
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    // The MIME type is text from a transport header: keep it short, as the input stream's would be.
    guard split <= 256 else { return 0 }
    let mime = String(decoding: bytes[..<split], as: UTF8.self)
    let body = Array(bytes[min(split + 1, bytes.count)...])
    let stream = MemoryInputStream(body, uri: "http://fuzz/stream", mimeType: mime)
    guard var decoder = try? FormatRegistry.standard.openDecoder(input: stream) else { return 0 }
    fuzzPlay(&decoder, calls: 64, chosen: fuzzChosenFrame(input))
    return 0
}
