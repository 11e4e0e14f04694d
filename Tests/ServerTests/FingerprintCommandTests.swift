// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Playback
import Synchronization
import TestSupport
import Testing

@testable import Server

/// `getfingerprint`: where its argument points, and how its answer comes back (computed off the loop by
/// `ServerOptions.fingerprinter`, replied as `mpd`'s background command).
@Suite(.serialized) struct FingerprintCommandTests {
    private final class Seen: Sendable {
        let sources = Mutex<[FingerprintSource]>([])
    }

    private static func fixture(_ seen: Seen) throws -> QueueFixture {
        try QueueFixture { options in
            options.remoteSchemes = ["http://"]
            options.fingerprinter = { source, _ in
                seen.sources.withLock { $0.append(source) }
                switch source {
                case .file(_, let uri) where uri.hasSuffix("nope.flac"):
                    return .failure(FingerprintError(.system, "Failed to open 'nope.flac': No such file or directory"))
                case .file(_, let uri) where uri.hasSuffix(".txt"):
                    return .failure(.decodingFailed)
                case .stream:
                    return .failure(FingerprintError(.unknown, "CURL failed: refused"))
                case .file:
                    return .success("AQAAB")
                }
            }
        }
    }

    @Test func answersAndErrorsAsMPDsBackgroundCommand() throws {
        let seen = Seen()
        let f = try Self.fixture(seen)
        #expect(f.request("getfingerprint a/1.mp3") == ["chromaprint: AQAAB", "OK"])
        // Any path in the music directory, as given, whether the database knows it or not.
        #expect(f.request("getfingerprint ../x/notes.txt") == ["ACK [5@0] {} Decoding failed"])
        let missing = "ACK [52@0] {} Failed to open 'nope.flac': No such file or directory"
        #expect(f.request("getfingerprint nope.flac") == [missing])
        #expect(f.request("getfingerprint http://h/x.mp3") == ["ACK [5@0] {} CURL failed: refused"])
        #expect(
            seen.sources.withLock { $0 } == [
                .file(path: f.music.path + "/a/1.mp3", uri: "a/1.mp3"),
                .file(path: f.music.path + "/../x/notes.txt", uri: "../x/notes.txt"),
                .file(path: f.music.path + "/nope.flac", uri: "nope.flac"), .stream(url: "http://h/x.mp3"),
            ])
        // Refused before any work: the command's own errors.
        #expect(f.request("getfingerprint /etc/passwd") == ["ACK [4@0] {getfingerprint} Access denied"])
        #expect(f.request("getfingerprint file:///etc/passwd") == ["ACK [4@0] {getfingerprint} Access denied"])
        #expect(f.request("getfingerprint ftp://h/x.mp3") == ["ACK [2@0] {getfingerprint} Unsupported URI scheme"])
        #expect(seen.sources.withLock { $0.count } == 4)
        #expect(f.request("commands").contains("command: getfingerprint"))
    }

    /// In a command list it ends the list: the commands after it are dropped and its reply ends with `OK`.
    @Test func endsACommandList() throws {
        let f = try Self.fixture(Seen())
        #expect(
            f.request("command_list_ok_begin\nping\ngetfingerprint a/1.mp3\nstatus\ncommand_list_end")
                == ["list_OK", "chromaprint: AQAAB", "OK"])
        #expect(f.request("ping") == ["OK"])
        #expect(
            f.request("command_list_begin\nping\ngetfingerprint nope.flac\nstatus\ncommand_list_end")
                == ["ACK [52@0] {} Failed to open 'nope.flac': No such file or directory"])
        #expect(f.request("ping") == ["OK"])
    }
}
