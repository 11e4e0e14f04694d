// SPDX-License-Identifier: GPL-3.0-or-later

import Chromaprint
import Formats
import Glibc
import Input
import Model
import Posix

/// Why `getfingerprint` failed, with the `ACK` code `mpd` answers it with.
public struct FingerprintError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `mpd`'s error classes here: a system call failed (`ACK_ERROR_SYSTEM`), or anything else
    /// (`ACK_ERROR_UNKNOWN`).
    public enum Kind: Sendable, Equatable {
        case system, unknown
    }

    /// The class.
    public var kind: Kind
    /// The message, worded as `mpd`'s.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { self.message }

    /// No plugin delivered audio.
    public static let decodingFailed = FingerprintError(.unknown, "Decoding failed")
}

/// `getfingerprint`'s computation, as `mpd`'s chromaprint decoder client does it: the song's first two
/// minutes of decoded audio, converted to signed 16-bit by `mpd`'s rules (`PCMToS16`), fed to libchromaprint
/// at the decoder's own rate and channel count. Blocks (decodes a file): call it off the event loop.
public enum ChromaprintDecoderClient {
    /// How much audio is fingerprinted.
    public static let seconds = 120

    /// The fingerprint of the local file at `path` (`uri`, relative to the music directory, chooses the
    /// plugins by its suffix, as in `mpd`: everything after its last dot), decoded by the first plugin for
    /// the suffix that takes it. `registry` is what the player decodes with; `cancellation` stops early (the
    /// client went away).
    ///
    /// - Throws: `FingerprintError`: "Decoding failed" when no plugin takes the file (or its URI has no
    ///   suffix), the system error when it cannot be opened, a plugin's own error.
    public static func fingerprint(
        file path: String, uri: String, registry: FormatRegistry, cancellation: InputCancellation
    ) throws(FingerprintError) -> String {
        guard let suffix = Self.suffix(uri) else { throw .decodingFailed }
        let plugins = registry.plugins(forSuffix: suffix)
        do {
            let file = try FileDescriptor.openForReading(path)
            defer { file.close() }
            if try file.status().kind != .regular { throw FingerprintError(.unknown, "Not a regular file: \(path)") }
        } catch let error as SystemCallError {
            // ENOTDIR: maybe a song inside a container file (`file.nsf/tune_002.nsf`), which only the
            // plugins with containers decode.
            if error.errno.rawValue == ENOTDIR {
                for plugin in plugins {
                    if let decoder = try? plugin.makeDecoder(path: path) {
                        return try Self.fingerprint(decoder, cancellation: cancellation)
                    }
                }
            }
            throw FingerprintError(.system, "Failed to open '\(path)': \(error.errno)")
        } catch let error as FingerprintError {
            throw error
        } catch {
            throw FingerprintError(.unknown, "\(error)")
        }
        for plugin in plugins {
            if cancellation.isCancelled { throw .decodingFailed }
            let decoder: any Decoder
            do {
                decoder = try plugin.makeDecoder(path: path)
            } catch {
                // A plugin that declines leaves the file to the next one; one that fails ends the command
                // with its error, as mpd's plugins throw out of its loop. Most of mpd's plugins only log
                // a file they cannot open and return (a decline).
                if case .notRecognized = error { continue }
                if Self.decliningPlugins.contains(plugin.name) { continue }
                guard let message = Self.message(error, plugin, path) else { continue }
                throw FingerprintError(error.isSystemError ? .system : .unknown, message)
            }
            return try Self.fingerprint(decoder, cancellation: cancellation)
        }
        throw .decodingFailed
    }

    /// The fingerprint of what `decoder` decodes, from where it stands.
    ///
    /// - Throws: `FingerprintError` when libchromaprint fails or reading the input fails.
    public static func fingerprint(_ decoder: any Decoder, cancellation: InputCancellation?) throws(FingerprintError)
        -> String
    {
        var decoder = decoder
        let format = decoder.format
        let context: ChromaprintContext
        do {
            context = try ChromaprintContext()
            try context.start(sampleRate: format.sampleRate, channels: format.channels)
        } catch {
            throw FingerprintError(.unknown, error.message)
        }
        var converter = PCMToS16(from: format)
        let frameSize = max(1, format.frameSize)
        // mpd counts the two minutes in bytes of the decoder's format.
        var remaining = Self.seconds * format.sampleRate * frameSize
        let chunkFrames = 4096
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkFrames * frameSize, alignment: 16)
        defer { buffer.deallocate() }
        var reachedEnd = false
        while remaining > 0, !(cancellation?.isCancelled ?? false) {
            let wanted = min(chunkFrames, (remaining + frameSize - 1) / frameSize)
            let frames: Int
            do {
                let room = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(wanted * frameSize)])
                frames = try decoder.decode(into: room)
            } catch {
                // A read error ends the command with its message; a decoding error ends the song, as mpd's
                // plugins stop at one.
                if case .input(let failure) = error { throw FingerprintError(.unknown, failure.mpdMessage) }
                break
            }
            if frames == 0 {
                reachedEnd = true
                break
            }
            let bytes = frames * frameSize
            remaining -= min(remaining, bytes)
            do {
                try converter.convert(UnsafeRawBufferPointer(rebasing: buffer[0..<bytes])) { samples in
                    try context.feed(samples)
                }
            } catch {
                throw FingerprintError(.unknown, "chromaprint_feed() failed")
            }
        }
        do {
            // A decoder that stopped itself at its end (mpd's Opus plugin on a seekable file throws StopDecoder,
            // which mpd's command catches before its `Finish`) leaves libchromaprint unflushed, as in mpd.
            if !(reachedEnd && decoder.endedWithStop) { try context.finish() }
            return try context.fingerprint()
        } catch {
            throw FingerprintError(.unknown, error.message)
        }
    }

    /// The plugins whose `mpd` counterparts log a file they cannot open and return without decoding, so that
    /// the next plugin for the suffix is tried (they throw only for bad settings); the others (ffmpeg,
    /// wavpack, faad, vorbis, opus, openmpt) throw, which ends `getfingerprint` with their message.
    static let decliningPlugins: Set<String> = [
        "mad", "mpg123", "flac", "oggflac", "sndfile", "dsdiff", "dsf", "mpcdec", "gme", "sidplay", "modplug",
        "mikmod", "wildmidi", "fluidsynth", "adplug",
    ]

    /// A throwing plugin's error as `mpd`'s plugin words it; `nil` when `mpd`'s plugin declines this one.
    private static func message(_ error: FormatError, _ plugin: any FormatPlugin, _ path: String) -> String? {
        let text = error.mpdMessage
        switch plugin.name {
        case "wavpack":
            let prefix = "WavpackOpenFileInputEx64: "
            guard text.hasPrefix(prefix) else { return text }
            return "failed to open WavPack file \"\(path)\": \(text.dropFirst(prefix.count))"
        case "openmpt":
            // An empty file is declined (mpd's plugin reads nothing and returns); else libopenmpt's own
            // message, without the function's name.
            if text.hasSuffix(": file is empty") { return nil }
            let prefix = "openmpt_module_create_from_memory2: "
            return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
        default:
            return text
        }
    }

    /// `mpd`'s suffix of a URI for choosing decoders: everything after its last dot, unless the dot is its
    /// first or last character (a dot in a directory name counts: `a.b/c` has the suffix `b/c`).
    static func suffix(_ uri: String) -> Substring? {
        guard let dot = uri.lastIndex(of: "."), dot != uri.startIndex, uri.index(after: dot) != uri.endIndex else {
            return nil
        }
        return uri[uri.index(after: dot)...]
    }
}

extension FormatError {
    /// Whether `mpd` would report it as a system error (a file that cannot be opened).
    fileprivate var isSystemError: Bool {
        if case .input(let failure) = self { return failure.isOpenFailure }
        return false
    }
}
