// SPDX-License-Identifier: GPL-3.0-or-later

import ALSA
import Configuration
import Formats
import Model
import Network
import Playback
import Synchronization

extension Daemon {
    /// Every output plugin Fermata has: the one place that lists them.
    static func outputPlugins(logger: Logger) -> [any OutputPlugin] {
        [ALSAOutputPlugin(logger: logger), NullOutputPlugin(), FifoOutputPlugin(), PipeOutputPlugin()]
    }

    /// The player the server's queue drives, with the outputs of the `audio_output` blocks (or ALSA's default
    /// device). Called once, on the loop thread.
    ///
    /// - Throws: `mpd`'s message for a bad `audio_output` block.
    static func makePlayer(
        settings: Settings, formats: FormatRegistry, loop: EventLoop, logger: Logger
    ) throws(StartupError) -> Player {
        // Hardware mixers are made before the player that relays their changes to the loop.
        let mixerChanges = MixerChangeForwarder()
        let outputs = try AudioOutputSetup.outputs(
            settings: settings, plugins: Self.outputPlugins(logger: logger), logger: logger,
            makeSoftwareMixer: { SoftwareMixer() }, onMixerChange: { mixerChanges.forward() })
        let player = Player(
            loop: loop, decoders: { (path) throws(FormatError) in try formats.openDecoder(path: path) },
            outputs: outputs.map { ($0.configuration, $0.output, $0.mixer) },
            audioBufferSize: settings.audioBufferSize,
            replayGain: ReplayGainSettings(
                preampDB: settings.replayGainPreamp, missingPreampDB: settings.replayGainMissingPreamp,
                limit: settings.replayGainLimit),
            audioOutputFormat: settings.audioOutputFormat, logger: logger)
        mixerChanges.target.withLock { $0 = player.mixerChangeReporter }
        for (configuration, _, _) in outputs {
            logger.info("audio output", ["name": configuration.name, "type": configuration.type])
        }
        return player
    }
}

/// Passes a hardware mixer's change notices to the player once it exists. Any thread.
private final class MixerChangeForwarder: Sendable {
    let target = Mutex<(@Sendable () -> Void)?>(nil)

    func forward() { self.target.withLock { $0 }?() }
}
