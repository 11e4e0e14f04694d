// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Why an encoder could not be set up or failed (`mpd`'s wording).
public struct EncoderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One line for the log and for `mpd`'s configuration errors.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

/// An open encoder: PCM in, encoded bytes out, as `mpd`'s `Encoder`.
///
/// Confined to the output thread that opened it. Steady writing does not allocate: buffers are sized for the
/// largest write seen.
public protocol Encoder: AnyObject {
    /// Whether a tag becomes part of the stream (Ogg chaining); otherwise the output sends it its own way
    /// (the httpd output's ICY metadata).
    var implementsTag: Bool { get }
    /// Encodes interleaved native-endian PCM (whole frames) in the format `open` returned.
    func write(_ pcm: UnsafeRawBufferPointer) throws(EncoderError)
    /// Makes buffered output come out with the next ``read(_:)`` (a partial Ogg page).
    func flush() throws(EncoderError)
    /// Ends the current (logical) stream before a tag.
    func preTag() throws(EncoderError)
    /// Starts a new stream carrying `tags` (only when ``implementsTag``).
    func sendTag(_ tags: [TagItem]) throws(EncoderError)
    /// Ends the stream (the output closes): the rest comes out with the next ``read(_:)``.
    func end() throws(EncoderError)
    /// Hands the encoded bytes ready now to `body`, in one or more calls.
    func read(_ body: (UnsafeRawBufferPointer) -> Void)
}

extension Encoder {
    public var implementsTag: Bool { false }
    public func flush() throws(EncoderError) {}
    public func preTag() throws(EncoderError) {}
    public func sendTag(_ tags: [TagItem]) throws(EncoderError) {}
    public func end() throws(EncoderError) {}
}

/// An encoder plugin configured from an output's block, ready to open streams (`mpd`'s `PreparedEncoder`).
public protocol PreparedEncoder: Sendable {
    /// The stream's MIME type (`Content-Type`), `nil` when the plugin has none.
    var mimeType: String? { get }
    /// Opens a stream for PCM in `format`.
    ///
    /// - Returns: the encoder and the format it takes (another sample format, rate or channel count where the
    ///   codec needs one); the output converts to it.
    func open(_ format: AudioFormat) throws(EncoderError) -> (encoder: any Encoder, format: AudioFormat)
}

/// An encoder plugin: reads its keys from an output's block.
public protocol EncoderPlugin: Sendable {
    /// The `encoder` value that selects it.
    var name: String { get }
    /// Reads the plugin's keys (`bitrate`, `quality`…).
    ///
    /// - Throws: `EncoderError` with `mpd`'s message for a bad value.
    func prepare(_ parameters: BlockParameters) throws(EncoderError) -> any PreparedEncoder
}

/// Every encoder plugin, in `mpd`'s order: the one place that knows which exist.
public enum EncoderPlugins {
    /// The plugins.
    public static let all: [any EncoderPlugin] = [
        VorbisEncoderPlugin(), OpusEncoderPlugin(), LameEncoderPlugin(), WaveEncoderPlugin(), FLACEncoderPlugin(),
    ]

    /// The encoder an output block asks for with `encoder` (default `vorbis`), configured from its keys.
    ///
    /// - Parameter shoutLegacy: the shout output's older spelling too, as `mpd` reads it: `encoding`, with
    ///   `ogg` for `vorbis` and `mp3` for `lame`.
    /// - Throws: `EncoderError` (`No such encoder: x`, or the plugin's message).
    public static func configured(
        _ parameters: BlockParameters, shoutLegacy: Bool = false
    ) throws(EncoderError) -> any PreparedEncoder {
        var name = parameters["encoder"] ?? (shoutLegacy ? parameters["encoding"] : nil) ?? "vorbis"
        if shoutLegacy, name == "ogg" { name = "vorbis" }
        if shoutLegacy, name == "mp3" { name = "lame" }
        guard let plugin = self.all.first(where: { $0.name == name }) else {
            throw EncoderError("No such encoder: \(name)")
        }
        return try plugin.prepare(parameters)
    }
}

/// Reading encoder keys as `mpd`'s `ConfigBlock` does.
enum EncoderParameters {
    /// An unsigned number (`GetBlockValue(name, unsigned)`), `fallback` when absent.
    ///
    /// - Throws: `Error in setting "name" on line N; Failed to parse number` (or `…; Value must not be negative`).
    static func unsigned(_ parameters: BlockParameters, _ name: String, _ fallback: Int) throws(EncoderError) -> Int {
        do {
            return try parameters.unsigned(name).map { Int($0) } ?? fallback
        } catch {
            throw EncoderError(error.message)
        }
    }

    /// A yes/no key, `fallback` when absent.
    ///
    /// - Throws: `Error in setting "name" on line N; Not a valid boolean ("yes" or "no"): "x"`.
    static func bool(_ parameters: BlockParameters, _ name: String, _ fallback: Bool) throws(EncoderError) -> Bool {
        do {
            return try parameters.bool(name) ?? fallback
        } catch {
            throw EncoderError(error.message)
        }
    }

    /// `quality` (VBR, -1…10) or `bitrate` (a positive number), as the lame and vorbis plugins read them.
    ///
    /// - Returns: `nil` when neither is set.
    static func qualityOrBitrate(_ parameters: BlockParameters) throws(EncoderError) -> QualityOrBitrate? {
        if let text = parameters["quality"] {
            guard let quality = Double(text), quality >= -1, quality <= 10 else {
                throw EncoderError("quality \"\(text)\" is not a number in the range -1 to 10")
            }
            if parameters["bitrate"] != nil { throw EncoderError("quality and bitrate are both defined") }
            return .quality(quality)
        }
        guard let text = parameters["bitrate"] else { return nil }
        guard let bitrate = Int(text), bitrate > 0 else { throw EncoderError("bitrate should be a positive integer") }
        return .bitrate(bitrate)
    }

    enum QualityOrBitrate: Sendable, Hashable {
        case quality(Double)
        case bitrate(Int)
    }

    /// The integer sample format an encoder takes `format` in: as it comes when it is one of `kept`, else
    /// `fallback`; with its bit count.
    static func integerSamples(
        _ format: AudioFormat, kept: Set<SampleFormat>, fallback: SampleFormat
    ) -> (format: AudioFormat, bits: Int) {
        var format = format
        if !kept.contains(format.sampleFormat) { format.sampleFormat = fallback }
        let bits =
            switch format.sampleFormat {
            case .s8: 8
            case .s16: 16
            case .s24: 24
            default: 32
            }
        return (format, bits)
    }

    /// Tags as Vorbis comments: upper-case names, as `mpd` writes them.
    static func comments(_ tags: [TagItem]) -> [(name: String, value: String)] {
        tags.map { (name: $0.type.name.uppercased(), value: $0.value) }
    }
}
