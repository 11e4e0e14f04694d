// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// `encoder "wave"`: PCM in a WAV container with a fake (endless) data length, as `mpd`'s wave encoder:
/// 8, 16, 24 (packed to 3 bytes) or 32 bits; anything else becomes 16 bits.
struct WaveEncoderPlugin: EncoderPlugin {
    let name = "wave"

    func prepare(_ parameters: BlockParameters) throws(EncoderError) -> any PreparedEncoder { PreparedWave() }

    struct PreparedWave: PreparedEncoder {
        var mimeType: String? { "audio/wav" }

        func open(_ format: AudioFormat) throws(EncoderError) -> (encoder: any Encoder, format: AudioFormat) {
            let (format, bits) = EncoderParameters.integerSamples(
                format, kept: [.s8, .s16, .s24, .s32], fallback: .s16)
            return (WaveEncoder(format, bits: bits), format)
        }
    }
}

/// The open wave encoder: the 44-byte header, then the samples little-endian.
final class WaveEncoder: Encoder {
    private let bits: Int
    private var output: [UInt8] = []

    init(_ format: AudioFormat, bits: Int) {
        self.bits = bits
        let dataSize = 0x0FFF_FFFF
        let blockAlign = bits / 8 * format.channels
        func le16(_ value: Int) -> [UInt8] {
            [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        }
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        self.output = Array("RIFF".utf8) + le32(4 + 8 + 16 + 8 + dataSize) + Array("WAVEfmt ".utf8) + le32(16)
        self.output += le16(1) + le16(format.channels) + le32(format.sampleRate)
        self.output += le32(format.sampleRate * blockAlign) + le16(blockAlign) + le16(bits)
        self.output += Array("data".utf8) + le32(dataSize)
    }

    func write(_ pcm: UnsafeRawBufferPointer) throws(EncoderError) {
        if self.bits == 24 {
            // 24 bits in 32-bit words, packed to their three low bytes.
            for index in 0..<(pcm.count / 4) {
                let value = pcm.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self).littleEndian
                self.output.append(UInt8(truncatingIfNeeded: value))
                self.output.append(UInt8(truncatingIfNeeded: value >> 8))
                self.output.append(UInt8(truncatingIfNeeded: value >> 16))
            }
        } else {
            // Little-endian already on every machine Fermata runs on.
            self.output.append(contentsOf: pcm)
        }
    }

    func read(_ body: (UnsafeRawBufferPointer) -> Void) {
        guard !self.output.isEmpty else { return }
        self.output.withUnsafeBytes { body($0) }
        self.output.removeAll(keepingCapacity: true)
    }
}
