// SPDX-License-Identifier: GPL-3.0-or-later

import FLAC
import Model

/// `encoder "flac"`: native FLAC through libFLAC at `compression` 0…8 (default 5), as `mpd`'s flac plugin;
/// 8 and 16 bits as they come, anything else as 24 bits.
struct FLACEncoderPlugin: EncoderPlugin {
    let name = "flac"

    func prepare(_ parameters: [String: String]) throws(EncoderError) -> any PreparedEncoder {
        let ogg = try EncoderParameters.bool(parameters, "oggflac", false)
        let chaining = try EncoderParameters.bool(parameters, "oggchaining", false)
        if ogg || chaining {
            throw EncoderError("Ogg FLAC (oggflac, oggchaining) is not supported yet")
        }
        return PreparedFLAC(compression: try EncoderParameters.unsigned(parameters, "compression", 5))
    }

    struct PreparedFLAC: PreparedEncoder {
        let compression: Int

        var mimeType: String? { "audio/flac" }

        func open(_ format: AudioFormat) throws(EncoderError) -> (encoder: any Encoder, format: AudioFormat) {
            let (format, bits) = EncoderParameters.integerSamples(format, kept: [.s8, .s16, .s24], fallback: .s24)
            do throws(FLACError) {
                let flac = try FLACStreamEncoder(
                    channels: format.channels, bitsPerSample: bits, sampleRate: format.sampleRate,
                    compression: self.compression)
                return (OpenFLAC(flac), format)
            } catch {
                throw EncoderError(Self.message(error))
            }
        }

        static func message(_ error: FLACError) -> String {
            if case .library(let function, let status) = error {
                return status.isEmpty ? function : "\(function): \(status)"
            }
            return error.description
        }
    }

    final class OpenFLAC: Encoder {
        private let flac: FLACStreamEncoder

        init(_ flac: FLACStreamEncoder) { self.flac = flac }

        func write(_ pcm: UnsafeRawBufferPointer) throws(EncoderError) {
            do throws(FLACError) { try self.flac.encode(pcm) } catch { throw EncoderError(PreparedFLAC.message(error)) }
        }
        func end() throws(EncoderError) { self.flac.finish() }
        func read(_ body: (UnsafeRawBufferPointer) -> Void) { self.flac.output(body) }
    }
}
