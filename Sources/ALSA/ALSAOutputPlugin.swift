// SPDX-License-Identifier: GPL-3.0-or-later

import CALSA
import Model
import Playback

/// The `alsa` output plugin: makes ``ALSAOutput``s and, for `mixer_type "hardware"`, ``ALSAMixer``s.
///
/// Creating the plugin sends alsa-lib's own error messages to `logger` (see ``ALSALog``). Any thread.
public struct ALSAOutputPlugin: OutputPlugin {
    /// `alsa`.
    public let name = "alsa"

    /// The device an output without `device` uses, and the one used when no `audio_output` is configured.
    public static let defaultDevice = "default"

    /// `buffer_time` when the block has none, in microseconds.
    public static let defaultBufferTime: UInt32 = 500_000

    private let logger: Logger

    /// Creates the plugin and installs alsa-lib's error handler.
    public init(logger: Logger) {
        self.logger = logger
        ALSALog.install(logger)
    }

    /// Reads `device`, `buffer_time`, `period_time`, `auto_resample`, `auto_channels`, `auto_format`, `dop`.
    /// `stop_dsd_silence` and `thesycon_dsd_workaround` are checked as `mpd` checks them, and `allowed_formats` is
    /// read, but Fermata does not act on them.
    ///
    /// - Throws: `Error in setting "buffer_time" on line N; Failed to parse number` and the like.
    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        let dop = try configuration.bool("dop", default: false)
        let dsdUSB = try configuration.bool("dsd_usb", default: false)
        _ = try configuration.bool("stop_dsd_silence", default: false)
        _ = try configuration.bool("thesycon_dsd_workaround", default: false)
        _ = configuration.parameters["allowed_formats"]
        return try ALSAOutput(
            device: configuration.string("device", default: Self.defaultDevice),
            bufferTime: configuration.positive("buffer_time", default: Self.defaultBufferTime),
            periodTime: configuration.positive("period_time", default: 0),
            autoResample: configuration.bool("auto_resample", default: true),
            autoChannels: configuration.bool("auto_channels", default: true),
            autoFormat: configuration.bool("auto_format", default: true),
            dop: dop || dsdUSB)
    }

    /// The simple mixer element `mixer_control` (default `PCM`) index `mixer_index` (default 0) on `mixer_device`
    /// (default `default`, as in `mpd`, whatever `device` says).
    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? {
        let device = configuration.string("mixer_device", default: ALSAMixer.defaultDevice)
        let control = configuration.string("mixer_control", default: ALSAMixer.defaultControl)
        return try ALSAMixer(
            device: device, control: control, index: configuration.unsigned("mixer_index", default: 0),
            logger: self.logger, onChange: onChange)
    }

    /// Whether ALSA's default device opens now (what `mpd` checks before choosing it when no output is
    /// configured). Any thread.
    ///
    /// - Returns: `nil` when it opens, otherwise why not (`snd_strerror` text).
    public static func probeDefaultDevice() -> String? {
        var pcm: OpaquePointer?
        let result = snd_pcm_open(&pcm, Self.defaultDevice, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        if result < 0 { return ALSAError.text(result) }
        if let pcm { snd_pcm_close(pcm) }
        return nil
    }

    /// ``probeDefaultDevice()``, with `mpd`'s error line.
    public func testDefaultDevice() -> DefaultDeviceTest? {
        guard let reason = Self.probeDefaultDevice() else { return .opens }
        return .fails(errors: ["Error opening default ALSA device: \(reason)"])
    }
}
