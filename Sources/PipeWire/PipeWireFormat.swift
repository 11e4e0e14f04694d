// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Playback

/// The raw stream format a pipewire output offers the graph, as `mpd`'s pipewire output chooses it: 8-, 16-, 32-bit,
/// 24-bit-in-32 and float samples as they are, DSD converted to 16-bit first; the rate and the channels as they are,
/// the channels placed in FLAC's order (unpositioned beyond 8). Pure; any thread.
public struct PipeWireStreamFormat: Sendable, Equatable {
    /// SPA's sample formats this output uses (`spa_audio_format`, native endian).
    public enum Sample: Sendable, Equatable {
        /// `SPA_AUDIO_FORMAT_S8`.
        case s8
        /// `SPA_AUDIO_FORMAT_S16`.
        case s16
        /// `SPA_AUDIO_FORMAT_S24_32`.
        case s24In32
        /// `SPA_AUDIO_FORMAT_S32`.
        case s32
        /// `SPA_AUDIO_FORMAT_F32`.
        case float32
    }

    /// SPA's channel positions (`spa_audio_channel`) this output names.
    public enum Position: Sendable, Equatable {
        case mono, frontLeft, frontRight, frontCenter, lowFrequency, rearLeft, rearRight, rearCenter, sideLeft
        case sideRight
    }

    /// The stream's sample format.
    public var sample: Sample
    /// Frames per second.
    public var rate: Int
    /// Interleaved channels.
    public var channels: Int
    /// Each channel's position, in the stream's order; `nil` for an unpositioned stream (more than 8 channels).
    public var positions: [Position]?

    /// A format.
    public init(sample: Sample, rate: Int, channels: Int, positions: [Position]?) {
        self.sample = sample
        self.rate = rate
        self.channels = channels
        self.positions = positions
    }

    /// The positions of `channels` channels in FLAC's order (the order `mpd` keeps samples in).
    public static func positions(channels: Int) -> [Position]? {
        switch channels {
        case 1: [.mono]
        case 2: [.frontLeft, .frontRight]
        case 3: [.frontLeft, .frontRight, .frontCenter]
        case 4: [.frontLeft, .frontRight, .rearLeft, .rearRight]
        case 5: [.frontLeft, .frontRight, .frontCenter, .rearLeft, .rearRight]
        case 6: [.frontLeft, .frontRight, .frontCenter, .lowFrequency, .rearLeft, .rearRight]
        case 7: [.frontLeft, .frontRight, .frontCenter, .lowFrequency, .rearCenter, .sideLeft, .sideRight]
        case 8:
            [.frontLeft, .frontRight, .frontCenter, .lowFrequency, .rearLeft, .rearRight, .sideLeft, .sideRight]
        default: nil
        }
    }

    /// The format for a song in `input`, and the format the output thread converts to before writing.
    public static func forInput(_ input: AudioFormat) -> (format: PipeWireStreamFormat, output: AudioFormat) {
        var output = input
        let sample: Sample
        switch input.sampleFormat {
        case .s8: sample = .s8
        case .s16: sample = .s16
        case .s24: sample = .s24In32
        case .s32: sample = .s32
        case .float: sample = .float32
        case .dsd:
            output.sampleFormat = .s16
            sample = .s16
        }
        let format = PipeWireStreamFormat(
            sample: sample, rate: input.sampleRate, channels: input.channels,
            positions: Self.positions(channels: input.channels))
        return (format, output)
    }

    /// Bytes of the ring buffer between the output thread and the graph: half a second, as `mpd`'s.
    public static func ringBytes(_ output: AudioFormat) -> Int { output.frameSize * (output.sampleRate / 2) }
}

/// What a `pipewire` block sets, read as `mpd` reads it. Pure; any thread.
public struct PipeWireSettings: Sendable, Equatable {
    /// The output's name: the node is `mpd.NAME`, the thread loop is named after it.
    public var name: String
    /// `remote`: the daemon's socket name (libpipewire's default when `nil`); ignored with a numeric `target`.
    public var remote: String?
    /// `target` when it names a node (`target.object`); `nil` when it is a number or not set.
    public var targetName: String?
    /// `target` when it is a number: the node id the stream connects to (`PW_ID_ANY` otherwise).
    public var targetID: UInt32
    /// `dsd`.
    public var dsd: Bool

    /// libpipewire's `PW_ID_ANY`.
    public static let anyID = UInt32.max

    /// Reads `remote`, `target` and `dsd`.
    ///
    /// - Throws: `target must not be empty`, or a bad `dsd` boolean's message.
    public init(_ configuration: OutputConfiguration) throws(OutputError) {
        self.name = configuration.name
        self.remote = configuration.parameters["remote"]
        self.targetName = nil
        self.targetID = Self.anyID
        if let target = configuration.parameters["target"] {
            guard !target.isEmpty else { throw OutputError("target must not be empty") }
            if let id = Self.number(target) {
                self.targetID = id
            } else {
                self.targetName = target
            }
        }
        self.dsd = try configuration.bool("dsd", default: false)
    }

    /// `target` read as `mpd` reads it (`strtoul` in base 10, the whole text, the low 32 bits).
    static func number(_ text: String) -> UInt32? {
        text.withCString { start -> UInt32? in
            var end: UnsafeMutablePointer<CChar>?
            let value = strtoul(start, &end, 10)
            guard let end, end != UnsafeMutablePointer(mutating: start), end.pointee == 0 else { return nil }
            return UInt32(truncatingIfNeeded: value)
        }
    }

    /// The `remote.name` property: only with no numeric target.
    public var remoteProperty: String? { self.targetID == Self.anyID ? self.remote : nil }
}

/// How `mpd`'s pipewire mixer maps its 0…100 volume to the stream's channel volumes: the cube of the fraction, and
/// back the cube root of their average, rounded to the nearest. Pure; any thread.
public enum PipeWireVolume {
    /// The channel volume for `percent`.
    public static func channelVolume(forPercent percent: Int) -> Float {
        let fraction = Float(percent) * 0.01
        return fraction * fraction * fraction
    }

    /// The fraction (0…1, more when another program raised it) the average of `values` stands for.
    public static func fraction(ofChannelVolumes values: UnsafeBufferPointer<Float>) -> Float? {
        guard !values.isEmpty else { return nil }
        var sum: Float = 0
        for value in values { sum += value }
        return cbrtf(sum / Float(values.count))
    }

    /// The mixer's 0…100 reading of `fraction`.
    public static func percent(ofFraction fraction: Float) -> Int { Int(lroundf(fraction * 100)) }
}
