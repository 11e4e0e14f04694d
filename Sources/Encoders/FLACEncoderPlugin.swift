// SPDX-License-Identifier: GPL-3.0-or-later

import FLAC
import Model

/// `encoder "flac"`: FLAC through libFLAC at `compression` 0…8 (default 5), as `mpd`'s flac plugin; 8 and
/// 16 bits as they come, anything else as 24 bits. `oggflac` makes it Ogg FLAC (`audio/ogg`); `oggchaining`
/// (which implies it) starts a chained stream carrying each song's tags.
struct FLACEncoderPlugin: EncoderPlugin {
    let name = "flac"

    func prepare(_ parameters: BlockParameters) throws(EncoderError) -> any PreparedEncoder {
        let chaining = try EncoderParameters.bool(parameters, "oggchaining", false)
        let ogg = try EncoderParameters.bool(parameters, "oggflac", false) || chaining
        return PreparedFLAC(
            compression: try EncoderParameters.unsigned(parameters, "compression", 5), ogg: ogg, chaining: chaining)
    }

    struct PreparedFLAC: PreparedEncoder {
        let compression: Int
        let ogg: Bool
        let chaining: Bool

        var mimeType: String? { self.ogg ? "audio/ogg" : "audio/flac" }

        func open(_ format: AudioFormat) throws(EncoderError) -> (encoder: any Encoder, format: AudioFormat) {
            let (format, bits) = EncoderParameters.integerSamples(format, kept: [.s8, .s16, .s24], fallback: .s24)
            do throws(FLACError) {
                let flac = try FLACStreamEncoder(
                    channels: format.channels, bitsPerSample: bits, sampleRate: format.sampleRate,
                    compression: self.compression, ogg: self.ogg)
                return (OpenFLAC(flac, chaining: self.chaining), format)
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
        let implementsTag: Bool

        init(_ flac: FLACStreamEncoder, chaining: Bool) {
            self.flac = flac
            self.implementsTag = chaining
        }

        func write(_ pcm: UnsafeRawBufferPointer) throws(EncoderError) {
            do throws(FLACError) { try self.flac.encode(pcm) } catch { throw EncoderError(PreparedFLAC.message(error)) }
        }
        func preTag() throws(EncoderError) { self.flac.finish() }
        func sendTag(_ tags: [TagItem]) throws(EncoderError) {
            do throws(FLACError) {
                try self.flac.restart(comments: EncoderParameters.comments(tags))
            } catch {
                throw EncoderError(PreparedFLAC.message(error))
            }
        }
        func end() throws(EncoderError) { self.flac.finish() }
        func read(_ body: (UnsafeRawBufferPointer) -> Void) { self.flac.output(body) }
    }
}
