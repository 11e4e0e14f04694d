// SPDX-License-Identifier: GPL-3.0-or-later

import CALSA
import Model
import Playback

/// Negotiates an opened PCM's hardware and software parameters the way `mpd` does: the requested sample format or
/// the first fallback the device takes, the nearest channel count and rate, `buffer_time`/`period_time`, then a
/// start threshold of one period less than the buffer. Output thread.
struct ALSAHardwareSetup {
    /// The format the stream is opened in, as the rest of Fermata sees it.
    let format: AudioFormat
    /// How those samples are written to the device.
    let wire: PCMWireFormat
    /// The device buffer, in frames.
    let bufferFrames: Int
    /// One period, in frames.
    let periodFrames: Int
    /// `snd_pcm_hw_params_can_pause`.
    let canPause: Bool

    /// Configures `pcm` for `requested`.
    ///
    /// - Throws: `mpd`'s texts, such as `Failed to configure format 16: Invalid argument`.
    init(pcm: OpaquePointer, requested: AudioFormat, bufferTime: UInt32, periodTime: UInt32) throws(OutputError) {
        var allocated: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&allocated) >= 0, let hw = allocated else {
            throw OutputError("snd_pcm_hw_params_malloc() failed")
        }
        defer { snd_pcm_hw_params_free(hw) }

        try ALSAError.check(snd_pcm_hw_params_any(pcm, hw), "snd_pcm_hw_params_any() failed")
        try ALSAError.check(
            snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED),
            "snd_pcm_hw_params_set_access() failed")

        let negotiated = PCMWireFormat.negotiate(requested.sampleFormat) { candidate in
            guard let alsaFormat = candidate.alsaFormat else { return -PCMWireFormat.invalidArgument }
            return snd_pcm_hw_params_set_format(pcm, hw, alsaFormat)
        }
        let wire: PCMWireFormat
        switch negotiated {
        case .success(let accepted): wire = accepted
        case .failure(let failure):
            throw ALSAError.error("Failed to configure format \(requested.sampleFormat.wireName)", failure.code)
        }

        var channels = UInt32(requested.channels)
        try ALSAError.check(
            snd_pcm_hw_params_set_channels_near(pcm, hw, &channels),
            "Failed to configure \(requested.channels) channels")

        var rate = UInt32(requested.sampleRate)
        try ALSAError.check(
            snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, nil),
            "Failed to configure sample rate \(requested.sampleRate) Hz")
        guard rate > 0 else { throw OutputError("Failed to configure sample rate \(requested.sampleRate) Hz") }

        var buffer = bufferTime
        if buffer > 0 {
            try ALSAError.check(
                snd_pcm_hw_params_set_buffer_time_near(pcm, hw, &buffer, nil),
                "snd_pcm_hw_params_set_buffer_time_near() failed")
        } else if snd_pcm_hw_params_get_buffer_time(hw, &buffer, nil) < 0 {
            buffer = 0
        }
        var period = periodTime
        if period == 0 && buffer >= 10_000 { period = buffer / 4 }
        if period > 0 {
            try ALSAError.check(
                snd_pcm_hw_params_set_period_time_near(pcm, hw, &period, nil),
                "snd_pcm_hw_params_set_period_time_near() failed")
        }
        try ALSAError.check(snd_pcm_hw_params(pcm, hw), "snd_pcm_hw_params() failed")

        var bufferFrames: snd_pcm_uframes_t = 0
        try ALSAError.check(
            snd_pcm_hw_params_get_buffer_size(hw, &bufferFrames), "snd_pcm_hw_params_get_buffer_size() failed")
        var periodFrames: snd_pcm_uframes_t = 0
        try ALSAError.check(
            snd_pcm_hw_params_get_period_size(hw, &periodFrames, nil), "snd_pcm_hw_params_get_period_size() failed")
        // A driver that reports a period of 0 frames would otherwise stall every computation that divides by it.
        periodFrames = max(1, periodFrames)
        self.canPause = snd_pcm_hw_params_can_pause(hw) != 0

        try Self.setUpSoftware(
            pcm, startThreshold: bufferFrames - min(bufferFrames, periodFrames), availMin: periodFrames)

        self.format = AudioFormat(sampleRate: Int(rate), sampleFormat: wire.sampleFormat, channels: Int(channels))
        self.wire = wire
        self.bufferFrames = Int(bufferFrames)
        self.periodFrames = Int(periodFrames)
    }

    private static func setUpSoftware(
        _ pcm: OpaquePointer, startThreshold: snd_pcm_uframes_t, availMin: snd_pcm_uframes_t
    ) throws(OutputError) {
        var allocated: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&allocated) >= 0, let sw = allocated else {
            throw OutputError("snd_pcm_sw_params_malloc() failed")
        }
        defer { snd_pcm_sw_params_free(sw) }
        try ALSAError.check(snd_pcm_sw_params_current(pcm, sw), "snd_pcm_sw_params_current() failed")
        try ALSAError.check(
            snd_pcm_sw_params_set_start_threshold(pcm, sw, startThreshold),
            "snd_pcm_sw_params_set_start_threshold() failed")
        try ALSAError.check(
            snd_pcm_sw_params_set_avail_min(pcm, sw, availMin), "snd_pcm_sw_params_set_avail_min() failed")
        try ALSAError.check(snd_pcm_sw_params(pcm, sw), "snd_pcm_sw_params() failed")
    }
}

extension PCMWireFormat {
    /// The ALSA sample format for this layout on a little-endian host.
    var alsaFormat: snd_pcm_format_t? {
        let swap = self.reverseEndian
        switch self.sampleFormat {
        case .s8: return swap ? nil : SND_PCM_FORMAT_S8
        case .s16: return swap ? SND_PCM_FORMAT_S16_BE : SND_PCM_FORMAT_S16_LE
        case .s24:
            if self.packed24 { return swap ? SND_PCM_FORMAT_S24_3BE : SND_PCM_FORMAT_S24_3LE }
            return swap ? SND_PCM_FORMAT_S24_BE : SND_PCM_FORMAT_S24_LE
        case .s32: return swap ? SND_PCM_FORMAT_S32_BE : SND_PCM_FORMAT_S32_LE
        case .float: return swap ? SND_PCM_FORMAT_FLOAT_BE : SND_PCM_FORMAT_FLOAT_LE
        case .dsd: return swap ? nil : SND_PCM_FORMAT_DSD_U8
        }
    }
}
