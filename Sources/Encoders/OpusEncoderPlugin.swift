// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Ogg

/// `encoder "opus"`: Ogg Opus through libopus, with `mpd`'s keys `bitrate` (`auto`, `max` or 500…512000 bit/s),
/// `complexity` (0…10, default 10), `signal` (`auto`, `voice`, `music`), `vbr` (`yes`, `no`, `constrained`),
/// `packet_loss` (0…100) and `opustags` (chain a stream per tag; default no). Input: 48 kHz, signed 16-bit or
/// float, mono or stereo.
struct OpusEncoderPlugin: EncoderPlugin {
    let name = "opus"

    func prepare(_ parameters: BlockParameters) throws(EncoderError) -> any PreparedEncoder {
        let bitrate: Int32
        switch parameters["bitrate"] ?? "auto" {
        case "auto": bitrate = OpusEncoder.Settings.auto
        case "max": bitrate = OpusEncoder.Settings.bitrateMax
        case let text:
            guard let value = Int32(text), value >= 500, value <= 512_000 else {
                throw EncoderError("Invalid bit rate")
            }
            bitrate = value
        }
        let complexity = try EncoderParameters.unsigned(parameters, "complexity", 10)
        guard complexity <= 10 else { throw EncoderError("Invalid complexity") }
        let signal: Int32
        switch parameters["signal"] ?? "auto" {
        case "auto": signal = OpusEncoder.Settings.auto
        case "voice": signal = OpusEncoder.Settings.signalVoice
        case "music": signal = OpusEncoder.Settings.signalMusic
        default: throw EncoderError("Invalid signal")
        }
        let vbr: (Bool, Bool)
        switch parameters["vbr"] ?? "yes" {
        case "yes": vbr = (true, false)
        case "no": vbr = (false, false)
        case "constrained": vbr = (true, true)
        default: throw EncoderError("Invalid vbr")
        }
        let packetLoss = try EncoderParameters.unsigned(parameters, "packet_loss", 0)
        guard packetLoss <= 100 else { throw EncoderError("Invalid packet loss") }
        return PreparedOpus(
            settings: OpusEncoder.Settings(
                bitrate: bitrate, complexity: Int32(complexity), signal: signal, vbr: vbr.0, vbrConstraint: vbr.1,
                packetLoss: Int32(packetLoss)),
            chaining: try EncoderParameters.bool(parameters, "opustags", false))
    }

    struct PreparedOpus: PreparedEncoder {
        let settings: OpusEncoder.Settings
        let chaining: Bool

        var mimeType: String? { "audio/ogg" }

        func open(_ format: AudioFormat) throws(EncoderError) -> (encoder: any Encoder, format: AudioFormat) {
            var format = format
            format.sampleRate = 48000
            if format.channels > 2 { format.channels = 1 }
            switch format.sampleFormat {
            case .s16, .float: break
            case .s8: format.sampleFormat = .s16
            default: format.sampleFormat = .float
            }
            do throws(OggEncoderError) {
                let opus = try OpusEncoder(
                    settings: self.settings, channels: format.channels, float: format.sampleFormat == .float)
                return (OpenOpus(opus, chaining: self.chaining), format)
            } catch {
                throw EncoderError(error.message)
            }
        }
    }

    final class OpenOpus: Encoder {
        private let opus: OpusEncoder
        let implementsTag: Bool

        init(_ opus: OpusEncoder, chaining: Bool) {
            self.opus = opus
            self.implementsTag = chaining
        }

        func write(_ pcm: UnsafeRawBufferPointer) throws(EncoderError) {
            do throws(OggEncoderError) { try self.opus.encode(pcm) } catch { throw EncoderError(error.message) }
        }
        func flush() throws(EncoderError) { self.opus.flush() }
        func preTag() throws(EncoderError) {
            do throws(OggEncoderError) { try self.opus.preTag() } catch { throw EncoderError(error.message) }
        }
        func sendTag(_ tags: [TagItem]) throws(EncoderError) { self.opus.sendTag(EncoderParameters.comments(tags)) }
        func end() throws(EncoderError) {
            do throws(OggEncoderError) { try self.opus.end() } catch { throw EncoderError(error.message) }
        }
        func read(_ body: (UnsafeRawBufferPointer) -> Void) { self.opus.pages(body) }
    }
}
