// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Ogg

/// `encoder "vorbis"` (the default): Ogg Vorbis through libvorbisenc; `quality` (VBR, -1…10, default 3) or
/// `bitrate` (kbit/s), as `mpd`'s vorbis plugin. Input: 32-bit float. Tags chain a new logical stream.
struct VorbisEncoderPlugin: EncoderPlugin {
    let name = "vorbis"

    func prepare(_ parameters: BlockParameters) throws(EncoderError) -> any PreparedEncoder {
        switch try EncoderParameters.qualityOrBitrate(parameters) {
        case .quality(let quality): PreparedVorbis(mode: .quality(quality))
        case .bitrate(let bitrate): PreparedVorbis(mode: .bitrate(bitrate))
        case nil: PreparedVorbis(mode: .quality(3))
        }
    }

    struct PreparedVorbis: PreparedEncoder {
        let mode: VorbisEncoder.Mode

        var mimeType: String? { "audio/ogg" }

        func open(_ format: AudioFormat) throws(EncoderError) -> (encoder: any Encoder, format: AudioFormat) {
            var format = format
            format.sampleFormat = .float
            do throws(OggEncoderError) {
                let vorbis = try VorbisEncoder(
                    mode: self.mode, channels: format.channels, sampleRate: format.sampleRate)
                return (OpenVorbis(vorbis), format)
            } catch {
                throw EncoderError(error.message)
            }
        }
    }

    final class OpenVorbis: Encoder {
        private let vorbis: VorbisEncoder

        init(_ vorbis: VorbisEncoder) { self.vorbis = vorbis }

        var implementsTag: Bool { true }
        func write(_ pcm: UnsafeRawBufferPointer) throws(EncoderError) { self.vorbis.encode(pcm) }
        func flush() throws(EncoderError) { self.vorbis.flush() }
        func preTag() throws(EncoderError) { self.vorbis.preTag() }
        func sendTag(_ tags: [TagItem]) throws(EncoderError) {
            self.vorbis.sendTag(EncoderParameters.comments(tags))
        }
        func end() throws(EncoderError) { self.vorbis.end() }
        func read(_ body: (UnsafeRawBufferPointer) -> Void) { self.vorbis.pages(body) }
    }
}
