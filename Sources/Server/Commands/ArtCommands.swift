// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Library
import MPDProtocol
import Model

/// Cover art: `albumart` (a cover file next to the song) and `readpicture` (a picture embedded in it).
enum ArtCommands {
    static let all: [Command] = [
        Command("albumart", .read, 2, 2, albumart),
        Command("readcomments", .read, 1, 1, readcomments),
        Command("readpicture", .read, 2, 2, readpicture),
    ]

    /// The file names `albumart` tries, in `mpd` 0.23.12's order.
    static let coverNames = ["cover.png", "cover.jpg", "cover.webp"]

    /// Writes one chunk of a binary object: `size`, optional `type`, `binary: n`, the bytes, a newline.
    static func writeChunk(_ data: [UInt8], offset: Int, type: String?, context: CommandContext) {
        let count = min(data.count - offset, context.client.binaryLimit)
        var header = "size: \(data.count)\n"
        if let type { header += "type: \(type)\n" }
        header += "binary: \(count)\n"
        context.client.write(header)
        context.client.write(bytes: data[offset..<(offset + count)])
        context.client.write("\n")
    }

    static func albumart(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let argument = context.arguments[0]
        let offset = Int(try ArgumentParser.unsigned(context.arguments[1]))
        let lowered = argument.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            // Remote streams have no cover files Fermata can reach (mpd's curl attempt fails the same way).
            throw AckError(.noExist, "No file exists")
        }
        let uri = try DatabaseCommands.relativeURI(argument, context: context)
        guard let root = context.server.options.musicDirectory, context.server.library != nil else {
            throw AckError(.noExist, "No database")
        }
        // The song's directory: everything before the last slash ("Artist/Album/" names the directory),
        // with "." and ".." resolved. mpd 0.23.12 would follow "../" out of the music directory; Fermata
        // never leaves it.
        var segments: [Substring] = []
        for segment in (uri.lastIndex(of: "/").map { uri[..<$0] } ?? "").split(separator: "/") {
            if segment == "." { continue }
            if segment == ".." {
                if segments.popLast() == nil { throw AckError(.noExist, "No file exists") }
                continue
            }
            segments.append(segment)
        }
        let directory = segments.joined(separator: "/")
        let base = directory.isEmpty ? root : root + "/" + directory
        for name in Self.coverNames {
            guard let data = FileManager.default.contents(atPath: base + "/" + name) else { continue }
            let bytes = [UInt8](data)
            if offset > bytes.count { throw AckError(.arg, "Offset too large") }
            writeChunk(bytes, offset: offset, type: nil, context: context)
            return .ok
        }
        throw AckError(.noExist, "No file exists")
    }

    /// `readcomments`: the file's raw name/value pairs, keeping only names of ASCII letters, `_` and `-`
    /// (starting with a letter) and values without control characters, as `mpd` does.
    static func readcomments(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let uri = try DatabaseCommands.relativeURI(context.arguments[0], context: context)
        let database = try DatabaseCommands.database(context)
        guard database.song(at: uri) != nil, let root = context.server.options.musicDirectory,
            let comments = context.server.options.commentReader
        else {
            throw AckError(.noExist, "No such song")
        }
        let pairs: [(name: String, value: String)]
        do {
            pairs = try comments(root + "/" + uri)
        } catch {
            throw AckError(.noExist, "Failed to load file")
        }
        func isLetter(_ byte: UInt8) -> Bool { (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) }
        var text = ""
        for (name, value) in pairs {
            let nameBytes = Array(name.utf8)
            guard let first = nameBytes.first, isLetter(first),
                nameBytes.allSatisfy({ isLetter($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }),
                value.utf8.allSatisfy({ $0 >= 0x20 })
            else { continue }
            text += "\(name): \(value)\n"
        }
        context.write(raw: text)
        return .ok
    }

    static func readpicture(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let uri = try DatabaseCommands.relativeURI(context.arguments[0], context: context)
        let offset = Int(try ArgumentParser.unsigned(context.arguments[1]))
        let database = try DatabaseCommands.database(context)
        guard database.song(at: uri) != nil, let root = context.server.options.musicDirectory,
            let pictures = context.server.options.pictureReader
        else {
            throw AckError(.noExist, "No such song")
        }
        let picture: Picture?
        do {
            picture = try pictures(root + "/" + uri)
        } catch {
            throw AckError(.noExist, "Failed to load file")
        }
        // No embedded picture: an empty reply, which clients read as "no picture".
        guard let picture else { return .ok }
        if offset > picture.data.count { throw AckError(.arg, "Bad file offset") }
        writeChunk(picture.data, offset: offset, type: picture.mimeType, context: context)
        return .ok
    }
}
