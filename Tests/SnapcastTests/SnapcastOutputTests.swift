// SPDX-License-Identifier: GPL-3.0-or-later

import Encoders
import Model
import Network
import Playback
import Posix
import TestSupport
import Testing

@testable import Snapcast

/// The snapcast output end to end over loopback, on a clock that moves only when the test says: a raw client says
/// hello, asks the time, gets the chunks stamped with when they were played, the tags, and is hung up on at close.
@Suite struct SnapcastOutputTests {
    static let format = AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2)

    /// An enabled output on a port of the system's choosing, its clock and its port.
    static func output() throws -> (SnapcastOutput, ManualClock, UInt16) {
        let clock = ManualClock(start: 5_000_000_000)
        let output = try SnapcastOutput(
            prepared: try EncoderPlugins.configured(["encoder": "wave"]), addresses: [.host("127.0.0.1", port: 0)],
            clock: clock, logger: .discarding)
        try output.enable()
        let port = try #require(output.boundAddresses.first?.port)
        return (output, clock, port)
    }

    /// Reads one whole message: its header and payload.
    static func message(_ client: LoopbackClient) throws -> (SnapcastHeader, [UInt8]) {
        let bytes = try #require(client.read(count: SnapcastHeader.size))
        let header = try #require(SnapcastHeader(parsing: bytes))
        let payload = try #require(client.read(count: Int(header.size)))
        return (header, payload)
    }

    static func hello(id: UInt16) -> [UInt8] {
        var bytes: [UInt8] = []
        SnapcastHeader(type: .hello, id: id, sent: SnapcastTimestamp(seconds: 0, microseconds: 0), size: 6)
            .append(to: &bytes)
        return bytes + [2, 0, 0, 0] + Array("{}".utf8)
    }

    @Test func aClientGetsSettingsCodecHeaderTimeChunksAndTagsThenIsHungUpOnAtClose() throws {
        let (output, clock, port) = try Self.output()
        defer { output.disable() }
        #expect(try output.open(Self.format) == Self.format)
        let client = try LoopbackClient(port: port)
        var request = Self.hello(id: 7)
        SnapcastHeader(type: .time, id: 9, sent: SnapcastTimestamp(seconds: 2, microseconds: 500_000), size: 8)
            .append(to: &request)
        client.send(bytes: request + [UInt8](repeating: 0, count: 8))

        let (settings, settingsPayload) = try Self.message(client)
        #expect(settings.type == 3 && settings.id == 1 && settings.refersTo == 7)
        #expect(settings.sent == SnapcastTimestamp(seconds: 5, microseconds: 0))
        #expect(settingsPayload == [18, 0, 0, 0] + Array(#"{"bufferMs": 1000}"#.utf8))
        let (codec, codecPayload) = try Self.message(client)
        #expect(codec.type == 1 && codec.id == 2 && codec.refersTo == 7)
        #expect(Array(codecPayload[0..<7]) == [3, 0, 0, 0] + Array("pcm".utf8))
        #expect(Array(codecPayload[11..<15]) == Array("RIFF".utf8) && codecPayload.count == 4 + 3 + 4 + 44)
        let (time, latency) = try Self.message(client)
        #expect(time.type == 4 && time.id == 3 && time.refersTo == 9)
        // Received at 5 s on the output's clock, sent at 2.5 s by the client's.
        #expect(latency == [2, 0, 0, 0] + [0x20, 0xA1, 0x07, 0x00])

        // Each write goes out as one chunk stamped with the clock when it was played.
        let first = (0..<960).map { UInt8(truncatingIfNeeded: $0) }
        #expect(try first.withUnsafeBytes { try output.play($0) } == 960)
        let (chunk, chunkPayload) = try Self.message(client)
        #expect(chunk.type == 2 && chunk.id == 4 && chunk.refersTo == 0 && chunk.size == 12 + 960)
        #expect(Array(chunkPayload[0..<12]) == [5, 0, 0, 0, 0, 0, 0, 0] + [0xC0, 3, 0, 0])
        #expect(Array(chunkPayload[12...]) == first)
        // 960 bytes are 5 ms: the next write waits for them.
        clock.advance(nanoseconds: 5_000_000)
        output.sendTag([TagItem(.title, "Song"), TagItem(.artist, "Band")])
        let (tags, tagsPayload) = try Self.message(client)
        #expect(tags.type == 6 && tags.id == 5)
        #expect(tagsPayload == [32, 0, 0, 0] + Array(#"{"artist":"Band","track":"Song"}"#.utf8))
        #expect(try first.withUnsafeBytes { try output.play($0) } == 960)
        let (second, secondPayload) = try Self.message(client)
        #expect(second.id == 6 && Array(secondPayload[0..<8]) == [5, 0, 0, 0, 0x88, 0x13, 0, 0])
        #expect(try output.drain())

        output.close()
        #expect(client.readUntilClosed().isEmpty && client.isClosed)
        // Closed, it takes no client: accepted and hung up on (before it says anything, which would make the hang-up
        // a reset).
        let late = try LoopbackClient(port: port)
        #expect(late.readUntilClosed().isEmpty && late.isClosed)
    }

    @Test func aClientSendingAnotherMessageIsHungUpOn() throws {
        let (output, _, port) = try Self.output()
        defer { output.disable() }
        _ = try output.open(Self.format)
        let client = try LoopbackClient(port: port)
        client.send(bytes: Self.hello(id: 1))
        _ = try Self.message(client)
        _ = try Self.message(client)
        var info: [UInt8] = []
        SnapcastHeader(type: .wireChunk, id: 2, sent: SnapcastTimestamp(seconds: 0, microseconds: 0), size: 0)
            .append(to: &info)
        client.send(bytes: info)
        #expect(client.readUntilClosed().isEmpty && client.isClosed)
        output.close()
    }
}
