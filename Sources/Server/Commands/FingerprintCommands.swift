// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import MPDProtocol
import Model
import Playback

/// `getfingerprint`: the song's acoustic fingerprint (libchromaprint over its first two minutes), computed off
/// the loop and answered when done, as `mpd`'s background command.
enum FingerprintCommands {
    static let all: [Command] = [
        Command("getfingerprint", .read, 1, 1, getfingerprint)
            .available(when: { services in services.options.fingerprinter != nil })
    ]

    /// Locates the argument as `mpd`'s `LocateUri` does for it (no database lookup: any file in the music
    /// directory, song or not, named by its path as given), then decodes it on a thread of its own.
    ///
    /// Errors found before decoding name the command; those of the decoding are `mpd`'s background errors
    /// (`ACK [code@0] {}`).
    static func getfingerprint(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        guard let fingerprinter = context.services.options.fingerprinter else {
            throw AckError(.unknown, "unknown command \"getfingerprint\"")
        }
        let source = try Self.locate(context.arguments[0], context: context)
        return .deferred(
            DeferredReply(isBackground: true, work: { cancellation in fingerprinter(source, cancellation) }) {
                outcome, context throws(AckError) in
                switch outcome {
                case .success(let fingerprint):
                    context.write("chromaprint", fingerprint)
                    return .ok
                case .failure(let error):
                    throw AckError(error.kind == .system ? .system : .unknown, error.message)
                }
            })
    }

    /// What `uri` names: a file (`file://` and absolute paths for local clients that may read it, stay
    /// absolute; other paths are relative to the music directory, `..` included, as in `mpd`), or a URL an
    /// input plugin opens.
    ///
    /// - Throws: `Access denied` (4) for a path from a client that may not read it, `Malformed file:// URI`
    ///   and `Unsupported URI scheme` (2), `No database` (50) without a music directory.
    static func locate(_ uri: String, context: CommandContext) throws(AckError) -> FingerprintSource {
        var path = uri
        if path.hasPrefix("file://") {
            path = String(path.dropFirst(7))
            guard path.hasPrefix("/") else { throw AckError(.arg, "Malformed file:// URI") }
        }
        if path.hasPrefix("/") {
            try context.session.allowFile(path)
            return .file(path: path, uri: path)
        }
        if URIScheme.hasScheme(uri) {
            guard QueueCommands.isRemote(uri, options: context.services.options) else {
                throw AckError(.arg, "Unsupported URI scheme")
            }
            return .stream(url: uri)
        }
        guard let root = context.services.options.musicDirectory else { throw AckError(.noExist, "No database") }
        return .file(path: root.hasSuffix("/") ? root + uri : root + "/" + uri, uri: uri)
    }
}
