// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// An `alsa://DEVICE?format=RATE:BITS:CHANNELS` URL as `mpd` 0.23.12's alsa input plugin reads it.
///
/// - The scheme and the `format=` key are matched case-insensitively.
/// - The device is the text between the scheme and the first `?`; empty, it is the plugin's `default_device`.
/// - After a `?`, the text must start with `format=`; the rest is the format, parsed whole (`44100:16:2&x=1` is
///   `Extra data after channel count: &x=1`). Without a `?`, the format is the plugin's `default_format`. A query
///   other than `format=…` (which crashes `mpd`) also takes `default_format`.
/// - The format is parsed as `mpd` parses audio formats, without wildcards; it is checked when the stream is
///   opened, so `add` takes any such URL and the error comes with playback (`Failed to decode …; Invalid sample
///   format: 17`).
///
/// Pure value; any thread.
public struct ALSAInputURL: Hashable, Sendable {
    /// `alsa://`.
    public static let scheme = "alsa://"

    /// The ALSA PCM to capture from.
    public var device: String
    /// The format as written (the URL's or `default_format`), which the stream's MIME type carries.
    public var formatText: String
    /// What ``formatText`` says.
    public var format: AudioFormat

    /// The MIME type the stream announces, which `mpd`'s `pcm` decoder plugin reads the format from.
    public var mimeType: String { "audio/x-mpd-alsa-pcm;format=\(self.formatText)" }

    /// Whether `url` is one of this plugin's: the `alsa://` scheme, in any case.
    public static func canOpen(_ url: String) -> Bool { URIScheme.hasPrefixIgnoringCase(url.utf8, Self.scheme) }

    /// Reads `url`, an `alsa://` URL (see ``canOpen(_:)``).
    ///
    /// - Parameters:
    ///   - defaultDevice: The device of a URL that names none (`default_device`).
    ///   - defaultFormat: The format of a URL that gives none (`default_format`).
    /// - Throws: `AudioFormatParseError` with `mpd`'s message for a bad format.
    public init(_ url: String, defaultDevice: String, defaultFormat: String) throws(AudioFormatParseError) {
        let bytes = Array(url.utf8)
        let question = bytes.firstIndex(of: UInt8(ascii: "?"))
        let device = bytes[min(Self.scheme.utf8.count, bytes.count)..<(question ?? bytes.count)]
        self.device = device.isEmpty ? defaultDevice : String(decoding: device, as: UTF8.self)
        var text = defaultFormat
        if let question {
            let query = bytes[(question + 1)...]
            if URIScheme.hasPrefixIgnoringCase(query, "format=") {
                text = String(decoding: query.dropFirst("format=".utf8.count), as: UTF8.self)
            }
        }
        self.formatText = text
        let mask = try AudioFormatMask.parse(text, mask: false)
        guard let rate = mask.sampleRate, let sampleFormat = mask.sampleFormat, let channels = mask.channels else {
            throw AudioFormatParseError("Invalid audio format specification: \(text)")
        }
        self.format = AudioFormat(sampleRate: rate, sampleFormat: sampleFormat, channels: channels)
    }
}
