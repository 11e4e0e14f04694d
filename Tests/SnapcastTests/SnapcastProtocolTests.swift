// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Snapcast

/// Snapcast's binary messages as `mpd`'s snapcast output frames them (the bytes were checked against what
/// `mpd` 0.23.12 sent a raw client), and the requests it reads.
@Suite struct SnapcastProtocolTests {
    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }

    /// A message header as the protocol lays it out, field by field.
    static func header(
        type: Int, id: Int, refersTo: Int, sent: (Int, Int), received: (Int, Int) = (0, 0), size: Int
    ) -> [UInt8] {
        le16(type) + le16(id) + le16(refersTo) + le32(sent.0) + le32(sent.1) + le32(received.0) + le32(received.1)
            + le32(size)
    }

    @Test func timestampsAreSecondsAndMicrosecondsOfTheClock() {
        let time = SnapcastTimestamp(nanoseconds: 33_846_778_104_999)
        #expect(time == SnapcastTimestamp(seconds: 33846, microseconds: 778_104))
        let wrapped = SnapcastTimestamp(nanoseconds: (UInt64(1) << 32 + 5) * 1_000_000_000)
        #expect(wrapped.seconds == 5)
    }

    @Test func timestampDifferenceBorrowsFromTheSeconds() {
        let received = SnapcastTimestamp(seconds: 33846, microseconds: 778_247)
        let sent = SnapcastTimestamp(seconds: 100, microseconds: 999_999)
        // What mpd answered a Time request sent at 100.999999 and read at 33846.778247.
        #expect(received - sent == SnapcastTimestamp(seconds: 33745, microseconds: 778_248))
        #expect(sent - sent == SnapcastTimestamp(seconds: 0, microseconds: 0))
        // A client clock ahead of ours: the fields wrap, as mpd's unsigned ones do.
        let ahead = SnapcastTimestamp(seconds: 1, microseconds: 0) - SnapcastTimestamp(seconds: 2, microseconds: 1)
        #expect(ahead == SnapcastTimestamp(seconds: UInt32.max - 1, microseconds: 999_999))
    }

    @Test func headerRoundTripsLittleEndian() throws {
        let header = SnapcastHeader(
            type: .time, id: 0x0102, refersTo: 0x0304, sent: SnapcastTimestamp(seconds: 0x0506_0708, microseconds: 9),
            received: SnapcastTimestamp(seconds: 10, microseconds: 11), size: 0x0C0D_0E0F)
        var bytes: [UInt8] = []
        header.append(to: &bytes)
        #expect(bytes.count == SnapcastHeader.size)
        #expect(
            bytes
                == Self.header(
                    type: 4, id: 0x0102, refersTo: 0x0304, sent: (0x0506_0708, 9), received: (10, 11), size: 0x0C0D_0E0F
                ))
        #expect(SnapcastHeader(parsing: bytes) == header)
        #expect(SnapcastHeader(parsing: bytes.dropLast()) == nil)
        // From the middle of a buffer too.
        #expect(SnapcastHeader(parsing: ([9, 9] + bytes)[2...]) == header)
    }

    @Test func serverSettingsCarryMpdsOneSecondBuffer() {
        var bytes: [UInt8] = []
        SnapcastMessage.serverSettings(
            id: 1, refersTo: 7, sent: SnapcastTimestamp(seconds: 3, microseconds: 4), into: &bytes)
        let json = Array(#"{"bufferMs": 1000}"#.utf8)
        #expect(bytes == Self.header(type: 3, id: 1, refersTo: 7, sent: (3, 4), size: 22) + Self.le32(18) + json)
    }

    @Test func codecHeaderNamesPcmAndCarriesTheWaveHeader() {
        var bytes: [UInt8] = []
        let wave = [UInt8](repeating: 0xAB, count: 44)
        SnapcastMessage.codecHeader(
            id: 2, refersTo: 7, sent: SnapcastTimestamp(seconds: 3, microseconds: 5), header: wave, into: &bytes)
        #expect(
            bytes
                == Self.header(type: 1, id: 2, refersTo: 7, sent: (3, 5), size: 55) + Self.le32(3) + Array("pcm".utf8)
                + Self.le32(44) + wave)
    }

    @Test func timeReplyCarriesTheRequestsLatency() {
        let request = SnapcastHeader(
            type: .time, id: 9, sent: SnapcastTimestamp(seconds: 100, microseconds: 999_999),
            received: SnapcastTimestamp(seconds: 33846, microseconds: 778_247), size: 8)
        var bytes: [UInt8] = []
        SnapcastMessage.timeReply(
            id: 3, request: request, sent: SnapcastTimestamp(seconds: 6, microseconds: 7), into: &bytes)
        #expect(
            bytes == Self.header(type: 4, id: 3, refersTo: 9, sent: (6, 7), size: 8) + Self.le32(33745)
                + Self.le32(778_248))
    }

    @Test func wireChunkHeadersPrecedeThePayload() {
        var bytes: [UInt8] = []
        SnapcastMessage.wireChunkHeaders(
            id: 4, sent: SnapcastTimestamp(seconds: 8, microseconds: 9),
            timestamp: SnapcastTimestamp(seconds: 33846, microseconds: 781_745), payloadSize: 4024, into: &bytes)
        #expect(
            bytes
                == Self.header(type: 2, id: 4, refersTo: 0, sent: (8, 9), size: 4036) + Self.le32(33846)
                + Self.le32(781_745) + Self.le32(4024))
    }

    @Test func streamTagsAreCompactJSONInMpdsOrder() throws {
        let tags = [
            TagItem(.title, "Song \"One\"\\2"), TagItem(.genre, "Noise"), TagItem(.album, "Ré/cord"),
            TagItem(.artist, "Band\n\u{1}"), TagItem(.artist, "Second"),
        ]
        let json = try #require(SnapcastMessage.streamTagsJSON(tags))
        #expect(
            String(decoding: json, as: UTF8.self)
                == #"{"artist":"Band\n\u0001","album":"Ré/cord","track":"Song \"One\"\\2"}"#)
        #expect(SnapcastMessage.streamTagsJSON([TagItem(.genre, "Noise")]) == nil)
        var bytes: [UInt8] = []
        SnapcastMessage.streamTags(
            id: 5, sent: SnapcastTimestamp(seconds: 1, microseconds: 2), json: [1, 2], into: &bytes)
        #expect(bytes == Self.header(type: 6, id: 5, refersTo: 0, sent: (1, 2), size: 6) + Self.le32(2) + [1, 2])
    }

    @Test func requestsAreReadWholeAndStampedWhenReceived() {
        let received = SnapcastTimestamp(seconds: 50, microseconds: 60)
        let hello = Self.header(type: 5, id: 7, refersTo: 0, sent: (1, 2), size: 6) + Self.le32(2) + Array("{}".utf8)
        guard case .hello(let header, let length) = SnapcastRequest(parsing: hello, received: received) else {
            Issue.record("not a hello")
            return
        }
        #expect(header.id == 7 && header.received == received && length == hello.count)
        // Not whole yet: the header, or part of the payload.
        #expect(SnapcastRequest(parsing: hello.prefix(20), received: received) == .incomplete)
        #expect(SnapcastRequest(parsing: hello.dropLast(), received: received) == .incomplete)
        // A claimed size far beyond what came.
        let huge = Self.header(type: 5, id: 1, refersTo: 0, sent: (0, 0), size: Int(UInt32.max))
        #expect(SnapcastRequest(parsing: huge, received: received) == .incomplete)

        let time = Self.header(type: 4, id: 9, refersTo: 0, sent: (1, 2), size: 8) + [UInt8](repeating: 0, count: 8)
        guard case .time(let timeHeader, let timeLength) = SnapcastRequest(parsing: time + hello, received: received)
        else {
            Issue.record("not a time request")
            return
        }
        #expect(timeHeader.id == 9 && timeLength == 34)
        let short = Self.header(type: 4, id: 9, refersTo: 0, sent: (1, 2), size: 4) + [0, 0, 0, 0]
        #expect(SnapcastRequest(parsing: short, received: received) == .ignored(length: 30))
        // Anything else a client sends (ClientInfo, or a server's message) gets it hung up on, as with mpd.
        let info = Self.header(type: 7, id: 1, refersTo: 0, sent: (0, 0), size: 0)
        #expect(SnapcastRequest(parsing: info, received: received) == .unexpected(type: 7))
    }

    @Test func chunkRecordsKeepTimeAndSize() {
        var bytes: [UInt8] = []
        SnapcastRecord.appendHeader(time: 0x0102_0304_0506_0708, size: 32768, to: &bytes)
        #expect(bytes.count == SnapcastOutput.recordHeaderSize)
        let (time, size) = bytes.withUnsafeBytes { SnapcastRecord.header($0) }
        #expect(time == 0x0102_0304_0506_0708 && size == 32768)
    }
}
