// SPDX-License-Identifier: GPL-3.0-or-later

import Lame
import Model

/// `encoder "lame"`: MP3 through libmp3lame; `quality` (VBR, -1…10) or `bitrate` (CBR, kbit/s), one of them
/// required, as `mpd`'s lame plugin. Input: signed 16-bit stereo at the song's rate.
struct LameEncoderPlugin: EncoderPlugin {
    let name = "lame"

    func prepare(_ parameters: BlockParameters) throws(EncoderError) -> any PreparedEncoder {
        switch try EncoderParameters.qualityOrBitrate(parameters) {
        // lame's VBR quality is an integer; `mpd` truncates.
        case .quality(let quality): PreparedLame(mode: .quality(Int(quality)))
        case .bitrate(let bitrate): PreparedLame(mode: .bitrate(bitrate))
        case nil: throw EncoderError("neither bitrate nor quality defined")
        }
    }

    struct PreparedLame: PreparedEncoder {
        let mode: LameEncoder.Mode

        var mimeType: String? { "audio/mpeg" }

        func open(_ format: AudioFormat) throws(EncoderError) -> (encoder: any Encoder, format: AudioFormat) {
            let format = AudioFormat(sampleRate: format.sampleRate, sampleFormat: .s16, channels: 2)
            do throws(LameError) {
                return (
                    OpenLame(try LameEncoder(mode: self.mode, channels: 2, sampleRate: format.sampleRate)), format
                )
            } catch {
                throw EncoderError(error.message)
            }
        }
    }

    /// The open encoder: what lame produced waits here until the output reads it.
    final class OpenLame: Encoder {
        private let lame: LameEncoder
        private var output: [UInt8] = []

        init(_ lame: LameEncoder) { self.lame = lame }

        func write(_ pcm: UnsafeRawBufferPointer) throws(EncoderError) {
            do throws(LameError) {
                try self.lame.encode(pcm) { self.output.append(contentsOf: $0) }
            } catch {
                throw EncoderError(error.message)
            }
        }

        func end() throws(EncoderError) { self.lame.finish { self.output.append(contentsOf: $0) } }

        func read(_ body: (UnsafeRawBufferPointer) -> Void) {
            guard !self.output.isEmpty else { return }
            self.output.withUnsafeBytes { body($0) }
            self.output.removeAll(keepingCapacity: true)
        }
    }
}
