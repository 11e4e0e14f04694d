// SPDX-License-Identifier: GPL-3.0-or-later

import ALSA
import AO
import Configuration
import Curl
import EventLoop
import Formats
import Httpd
import Input
import Jack
import Model
import OSS
import OpenAL
import PipeWire
import Playback
import Posix
import Pulse
import Recorder
import Samplerate
import Server
import Shout
import Snapcast
import Sndio
import Soxr
import Synchronization

extension Daemon {
    /// Every output plugin Fermata has: the one place that lists them, in `mpd` 0.23.12's order (its
    /// `audio_output_plugins`, as Debian builds it), which is the order of output detection.
    static func outputPlugins(logger: Logger, home: String) -> [any OutputPlugin] {
        [
            ShoutOutputPlugin(logger: logger), NullOutputPlugin(), FifoOutputPlugin(), SndioOutputPlugin(),
            PipeOutputPlugin(),
            ALSAOutputPlugin(logger: logger), AOOutputPlugin(logger: logger), OSSOutputPlugin(logger: logger),
            OpenALOutputPlugin(),
            PipeWireOutputPlugin(logger: logger), PulseOutputPlugin(), JackOutputPlugin(logger: logger),
            HttpdOutputPlugin(logger: logger, home: home),
            SnapcastOutputPlugin(logger: logger, home: home, announcer: OutputZeroconf(logger: logger)),
            RecorderOutputPlugin(home: home),
        ]
    }

    /// The player the default partition's queue drives, with the outputs of the `audio_output` blocks (or ALSA's
    /// default device), and a maker of players for new partitions: the same settings, no output until one moves
    /// in. Every player decodes local files through `cache` (the `input_cache`, shared as `mpd`'s instance shares
    /// it) and prefetches into it. Called once, on the loop thread.
    ///
    /// - Returns: The players, and the lines of the `audio_output` and used `filter` blocks nothing read (for
    ///   `BlockCheck`).
    /// - Throws: `mpd`'s message for a bad `audio_output` block.
    static func makePlayer(
        settings: Settings, formats: FormatRegistry, openRemote: RemoteOpener?, decoderSchemes: [String],
        cache: InputCache?, loop: EventLoop, logger: Logger
    ) throws(StartupError) -> (player: Player, newPlayer: () -> Player, unread: [ConfigParameter]) {
        // Hardware mixers are made before the player that relays their changes to the loop.
        let mixerChanges = MixerChangeForwarder()
        let (outputs, unread) = try AudioOutputSetup.outputs(
            settings: settings,
            plugins: Self.outputPlugins(logger: logger, home: ProcessEnvironment.variables()["HOME"] ?? "/"),
            logger: logger,
            makeSoftwareMixer: { SoftwareMixer() }, onMixerChange: { mixerChanges.forward() })
        var streams: (@Sendable (String, InputCancellation, Bool) throws(FormatError) -> any Decoder)?
        if let openRemote {
            streams = { (url, cancellation, replayGain) throws(FormatError) in
                try Self.openStream(
                    url, open: openRemote, decoderSchemes: decoderSchemes, cancellation: cancellation, formats: formats,
                    readsAPEReplayGain: replayGain)
            }
        }
        let resampler = try Self.resampler(settings.resampler)
        let slots = outputs.count
        func make(_ outputs: [(OutputConfiguration, any AudioOutput, (any Mixer)?)]) -> Player {
            Player(
                loop: loop,
                decoders: { (path) throws(FormatError) in try formats.openDecoder(path: path, cache: cache) },
                streams: streams, apeReplayGainReader: { formats.readAPEReplayGain(path: $0) },
                localPaths: { UdisksStorage.localPath(of: $0, cancellation: $1) }, outputs: outputs,
                outputSlots: slots, audioBufferSize: settings.audioBufferSize,
                replayGain: ReplayGainSettings(
                    preampDB: settings.replayGainPreamp, missingPreampDB: settings.replayGainMissingPreamp,
                    limit: settings.replayGainLimit),
                audioOutputFormat: settings.audioOutputFormat, resampler: resampler, inputCache: cache, logger: logger)
        }
        let player = make(outputs.map { ($0.configuration, $0.output, $0.mixer) })
        // As mpd: a hardware mixer's changes reach the partition its output was configured in, wherever it moves.
        mixerChanges.target.withLock { $0 = player.mixerChangeReporter }
        for (configuration, _, _) in outputs {
            logger.info("audio output", ["name": configuration.name, "type": configuration.type])
        }
        return (player, { make([]) }, unread)
    }
}

extension Daemon {
    /// Opens a decoder for a URL as `mpd`'s decoder thread does: for a scheme the decoder plugins open themselves
    /// (`rtsp://`, `rtp://`: `decoderSchemes`), that plugin; else the input plugin for its scheme (curl for
    /// http(s), ffmpeg for `hls+http://` and the rest libavformat reads), with the first 64 KiB kept for probing
    /// when it cannot seek, then the format plugin by MIME type and suffix. Decoder thread.
    ///
    /// - Throws: `FormatError.input` when the stream cannot be opened (`CURL failed: …`) or no input plugin
    ///   opens the scheme; what the format plugins throw.
    static func openStream(
        _ url: String, open: RemoteOpener, decoderSchemes: [String], cancellation: InputCancellation,
        formats: FormatRegistry, readsAPEReplayGain: Bool = false
    ) throws(FormatError) -> any Decoder {
        if decoderSchemes.contains(where: { URIScheme.hasPrefixIgnoringCase(url.utf8, $0) }) {
            return try formats.openDecoder(url: url, cancellation: cancellation)
        }
        let stream: any InputStream
        do {
            stream = try open(url, cancellation)
        } catch {
            throw .input(error)
        }
        return try formats.openStreamDecoder(
            input: RewindInputStream(stream), readsAPEReplayGain: readsAPEReplayGain)
    }
}

extension Daemon {
    /// The player's resampler for the `resampler` setting.
    ///
    /// - Throws: `StartupError` for a libsamplerate `type` it has no converter for, as `mpd` refuses it
    ///   (`unknown samplerate converter 'x'`).
    static func resampler(_ setting: ResamplerSetting) throws(StartupError) -> Resampler {
        switch setting.plugin {
        case .libsamplerate(let type, let location):
            guard let converter = SamplerateResampler.Converter(setting: type) else {
                let at = location.map { "\($0): " } ?? ""
                throw StartupError(description: "\(at)unknown samplerate converter '\(type)'")
            }
            return .libsamplerate(converter)
        case .internal: return .libsamplerate(.zeroOrderHold)
        case .soxr(let quality):
            switch quality {
            case .veryHigh: return .soxr(.veryHigh)
            case .high: return .soxr(.high)
            case .medium: return .soxr(.medium)
            case .low: return .soxr(.low)
            case .quick: return .soxr(.quick)
            }
        case .soxrCustom(let recipe):
            return .soxr(
                .custom(
                    SoxrResampler.CustomRecipe(
                        precision: Double(recipe.precision), phaseResponse: Double(recipe.phaseResponse),
                        passbandEnd: recipe.passbandEnd, stopbandBegin: recipe.stopbandBegin,
                        flags: UInt(recipe.flags), scale: recipe.scale)))
        }
    }
}

/// Passes a hardware mixer's change notices to the player once it exists. Any thread.
private final class MixerChangeForwarder: Sendable {
    let target = Mutex<(@Sendable () -> Void)?>(nil)

    func forward() { self.target.withLock { $0 }?() }
}

extension Daemon {
    /// `getfingerprint`'s work: decodes a local file with the plugins for its suffix, or a URL through its
    /// input plugin, and fingerprints the first two minutes. Blocks: a command thread.
    static func fingerprint(
        _ source: FingerprintSource, formats: FormatRegistry, openRemote: RemoteOpener?, cancellation: InputCancellation
    ) -> Result<String, FingerprintError> {
        do throws(FingerprintError) {
            switch source {
            case .file(let path, let uri):
                return .success(
                    try ChromaprintDecoderClient.fingerprint(
                        file: path, uri: uri, registry: formats, cancellation: cancellation))
            case .stream(let url):
                guard let openRemote else { throw FingerprintError(.unknown, "Unsupported URI scheme") }
                let decoder: any Decoder
                do throws(FormatError) {
                    // mpd's getfingerprint opens every URL through an input plugin, never a decoder plugin's
                    // own (`rtsp://` is "Unrecognized URI" there).
                    decoder = try Self.openStream(
                        url, open: openRemote, decoderSchemes: [], cancellation: cancellation, formats: formats)
                } catch {
                    if case .notRecognized = error { throw .decodingFailed }
                    if case .input(let failure) = error, failure.isSystemError {
                        throw FingerprintError(.system, error.mpdMessage)
                    }
                    throw FingerprintError(.unknown, error.mpdMessage)
                }
                return .success(try ChromaprintDecoderClient.fingerprint(decoder, cancellation: cancellation))
            }
        } catch {
            return .failure(error)
        }
    }
}
