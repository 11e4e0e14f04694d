// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import Model
import Posix
import Synchronization
import Testing

@testable import ALSA

struct PCMWireFormatTests {
    /// Negotiates against a device accepting exactly `accepted`; returns the choice and every layout tried.
    func negotiate(_ requested: SampleFormat, accepting accepted: Set<PCMWireFormat>) -> (PCMWireFormat?, [String]) {
        var tried: [String] = []
        let result = PCMWireFormat.negotiate(requested) { candidate in
            tried.append(candidate.description)
            return accepted.contains(candidate) ? 0 : -PCMWireFormat.invalidArgument
        }
        return (try? result.get(), tried)
    }

    @Test func theRequestedFormatWinsWhenAccepted() {
        let (chosen, tried) = self.negotiate(.s16, accepting: [PCMWireFormat(sampleFormat: .s16)])
        #expect(chosen == PCMWireFormat(sampleFormat: .s16))
        #expect(tried == ["16"])
    }

    @Test func twentyFourBitsFallBackToThreeBytesThenByteSwapped() {
        let packed = PCMWireFormat(sampleFormat: .s24, packed24: true)
        let (chosen, tried) = self.negotiate(.s24, accepting: [packed])
        #expect(chosen == packed)
        #expect(tried == ["24", "24_3"])

        let swappedPacked = PCMWireFormat(sampleFormat: .s24, packed24: true, reverseEndian: true)
        let (chosen2, tried2) = self.negotiate(.s24, accepting: [swappedPacked])
        #expect(chosen2 == swappedPacked)
        #expect(tried2 == ["24", "24_3", "24 (byte-swapped)", "24_3 (byte-swapped)"])
    }

    @Test func aRefusedFormatProbes24Then32Then16Then8() {
        let (chosen, tried) = self.negotiate(.float, accepting: [PCMWireFormat(sampleFormat: .s8)])
        #expect(chosen == PCMWireFormat(sampleFormat: .s8))
        #expect(
            tried == [
                "f", "f (byte-swapped)", "24", "24_3", "24 (byte-swapped)", "24_3 (byte-swapped)", "32",
                "32 (byte-swapped)", "16", "16 (byte-swapped)", "8",
            ])
    }

    @Test func anErrorOtherThanUnsupportedStopsTheSearch() {
        let result = PCMWireFormat.negotiate(.s16) { _ in -Int32(EBUSY) }
        #expect(throws: NegotiationFailure(code: -Int32(EBUSY))) { try result.get() }
    }

    @Test func nothingAcceptedReportsInvalidArgument() {
        let result = PCMWireFormat.negotiate(.s16) { _ in -PCMWireFormat.invalidArgument }
        #expect(throws: NegotiationFailure(code: -PCMWireFormat.invalidArgument)) { try result.get() }
    }

    @Test func packingKeepsTheLowThreeBytesOfEachWord() {
        // Two stereo frames of 24-in-32 samples: 0x123456, -2 (0xFFFFFE), 0x7FFFFF, -0x800000.
        let words: [Int32] = [0x12_3456, -2, 0x7F_FFFF, -0x80_0000]
        var out = [UInt8](repeating: 0, count: 12)
        let wire = PCMWireFormat(sampleFormat: .s24, packed24: true)
        words.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { wire.export(input, frames: 2, channels: 2, into: $0) }
        }
        #expect(out == [0x56, 0x34, 0x12, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x80])

        let bigEndian = PCMWireFormat(sampleFormat: .s24, packed24: true, reverseEndian: true)
        words.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { bigEndian.export(input, frames: 2, channels: 2, into: $0) }
        }
        #expect(out == [0x12, 0x34, 0x56, 0xFF, 0xFF, 0xFE, 0x7F, 0xFF, 0xFF, 0x80, 0x00, 0x00])
    }

    @Test func byteSwappingReversesEachSample() {
        let samples: [Int16] = [0x0102, -2]
        var out = [UInt8](repeating: 0, count: 4)
        let wire = PCMWireFormat(sampleFormat: .s16, reverseEndian: true)
        #expect(wire.needsExport)
        samples.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { wire.export(input, frames: 1, channels: 2, into: $0) }
        }
        #expect(out == [0x01, 0x02, 0xFF, 0xFE])
        #expect(!PCMWireFormat(sampleFormat: .s32).needsExport)
    }

    /// Exports one frame whose samples are their own channel numbers; the channel order that comes out.
    func exportedOrder(_ wire: PCMWireFormat, channels: Int) -> [Int16] {
        let frame = (0..<channels).map { Int16($0) }
        var out = [Int16](repeating: -1, count: channels * 2)
        (frame + frame).withUnsafeBytes { input in
            out.withUnsafeMutableBytes { wire.export(input, frames: 2, channels: channels, into: $0) }
        }
        #expect(out[channels...].elementsEqual(out[..<channels]))
        return Array(out[..<channels])
    }

    @Test func surroundMovesIntoALSAsChannelOrder() {
        let wire = PCMWireFormat(sampleFormat: .s16)
        // mpd's alsa_channel_order: FL FR FC LFE BL BR SL SR -> FL FR BL BR FC LFE SL SR (7.0's back centre last).
        let expected: [Int: [Int16]] = [
            5: [0, 1, 3, 4, 2], 6: [0, 1, 4, 5, 2, 3], 7: [0, 1, 5, 6, 2, 3, 4], 8: [0, 1, 4, 5, 2, 3, 6, 7],
        ]
        for channels in 1...8 {
            let ordered = wire.ordering(channels: channels, dsdOverPCM: false)
            #expect(ordered.needsExport == (channels >= 5), "\(channels) channels")
            #expect(
                self.exportedOrder(ordered, channels: channels)
                    == expected[channels, default: (0..<channels).map { Int16($0) }])
        }
    }

    @Test func surroundOrderCombinesWithPackingAndLeavesEightBitsAndDoPAlone() {
        // 5.1 of 24-in-32 packed to 3 bytes: the channel order changes, and each sample keeps its low 3 bytes.
        let words: [Int32] = (0..<6).map { 0x10_0000 * Int32($0) + 0x0102 }
        var out = [UInt8](repeating: 0, count: 18)
        let wire = PCMWireFormat(sampleFormat: .s24, packed24: true).ordering(channels: 6, dsdOverPCM: false)
        words.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { wire.export(input, frames: 1, channels: 6, into: $0) }
        }
        #expect(stride(from: 2, to: 18, by: 3).map { out[$0] } == [0x00, 0x10, 0x40, 0x50, 0x20, 0x30])
        #expect(!PCMWireFormat(sampleFormat: .s8).ordering(channels: 6, dsdOverPCM: false).needsExport)
        #expect(!PCMWireFormat(sampleFormat: .s24).ordering(channels: 6, dsdOverPCM: true).needsExport)
    }
}

struct InterruptibleWaitTests {
    @Test func anInterruptEndsAWaitOnADescriptorThatNeverBecomesReady() throws {
        let wait = try InterruptibleWait()
        let (readEnd, writeEnd) = try FileDescriptor.pipe()
        defer {
            readEnd.close()
            writeEnd.close()
        }
        let descriptors = UnsafeMutablePointer<pollfd>.allocate(capacity: 2)
        defer { descriptors.deallocate() }
        descriptors[0] = pollfd(fd: readEnd.rawValue, events: Int16(POLLIN), revents: 0)

        let sent = Atomic<Bool>(false)
        Thread.detachNewThread {
            usleep(100_000)
            sent.store(true, ordering: .releasing)
            wait.interrupt()
        }
        // No timeout: only the interrupt can end this wait, and it did not end before the interrupt was sent.
        #expect(wait.wait(descriptors, count: 1, timeoutMilliseconds: -1))
        #expect(sent.load(ordering: .acquiring) == true)
        // The interrupt was consumed: the next wait runs to its timeout.
        descriptors[0] = pollfd(fd: readEnd.rawValue, events: Int16(POLLIN), revents: 0)
        #expect(!wait.wait(descriptors, count: 1, timeoutMilliseconds: 20))
    }

    @Test func anInterruptBeforeTheWaitEndsItAtOnce() throws {
        let wait = try InterruptibleWait()
        let descriptors = UnsafeMutablePointer<pollfd>.allocate(capacity: 1)
        defer { descriptors.deallocate() }
        wait.interrupt()
        // `true`: the interrupt ended it (a lost interrupt would time out and return `false`).
        #expect(wait.wait(descriptors, count: 0, timeoutMilliseconds: 5000))
    }
}
