// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Soxr
import Synchronization
import Testing

@Suite struct SoxrResamplerTests {
    /// Resamples one second of a stereo sine fed in 1024-frame blocks, then flushes.
    private func resample(frequency: Double, from input: Int, to output: Int) throws -> [Float] {
        let resampler = try SoxrResampler(inputRate: input, outputRate: output, channels: 2)
        let block = 1024
        let capacity = resampler.maxOutputFrames(forInput: block)
        let source = UnsafeMutablePointer<Float>.allocate(capacity: block * 2)
        let target = UnsafeMutablePointer<Float>.allocate(capacity: capacity * 2)
        defer {
            source.deallocate()
            target.deallocate()
        }
        var result: [Float] = []
        var frame = 0
        while frame < input {
            let count = min(block, input - frame)
            for index in 0..<count {
                let value = Float(0.5 * sin(2 * Double.pi * frequency * Double(frame + index) / Double(input)))
                source[2 * index] = value
                source[2 * index + 1] = -value
            }
            let produced = try resampler.process(source, frames: count, into: target, capacity: capacity)
            #expect(produced <= capacity)
            result.append(contentsOf: UnsafeBufferPointer(start: target, count: produced * 2))
            frame += count
        }
        while true {
            let produced = try resampler.flush(into: target, capacity: capacity)
            result.append(contentsOf: UnsafeBufferPointer(start: target, count: produced * 2))
            if produced < capacity { break }
        }
        return result
    }

    @Test(arguments: [(44100, 48000), (48000, 44100), (44100, 96000)])
    func producesTheRightNumberOfFramesAndKeepsTheFrequency(input: Int, output: Int) throws {
        let samples = try self.resample(frequency: 1000, from: input, to: output)
        // One second in is one second out.
        #expect(abs(samples.count / 2 - output) <= 1, "\(samples.count / 2) frames")
        // Away from the edges, the left channel still crosses zero upwards 1000 times a second.
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let middle = left[(output / 10)..<(output * 9 / 10)]
        var rising = 0
        var previous = middle.first!
        for value in middle.dropFirst() {
            if previous < 0 && value >= 0 { rising += 1 }
            previous = value
        }
        #expect(abs(rising - 800) <= 1, "\(rising) rising zero crossings in 0.8 s")
        // The level survives (a 0.5 sine) and the right channel stays the left's mirror.
        #expect(abs((middle.max() ?? 0) - 0.5) < 0.01)
        #expect(
            zip(left, stride(from: 1, to: samples.count, by: 2).map { samples[$0] }).allSatisfy { abs($0 + $1) < 1e-4 })
    }

    @Test func resetForgetsTheSignal() throws {
        let resampler = try SoxrResampler(inputRate: 44100, outputRate: 48000, channels: 1)
        let loud = [Float](repeating: 0.9, count: 4096)
        let silent = [Float](repeating: 0, count: 4096)
        var output = [Float](repeating: 0, count: resampler.maxOutputFrames(forInput: 4096))
        let capacity = output.count
        _ = try loud.withUnsafeBufferPointer { source in
            try output.withUnsafeMutableBufferPointer {
                try resampler.process(source.baseAddress!, frames: 4096, into: $0.baseAddress!, capacity: capacity)
            }
        }
        resampler.reset()
        let produced = try silent.withUnsafeBufferPointer { source in
            try output.withUnsafeMutableBufferPointer {
                try resampler.process(source.baseAddress!, frames: 4096, into: $0.baseAddress!, capacity: capacity)
            }
        }
        #expect(produced > 0)
        #expect(output[0..<produced].allSatisfy { abs($0) < 1e-6 })
    }

    @Test func theFirstResamplerLoadsTheLibraryAndKeepsItLoaded() throws {
        let library = SoxrLibrary()
        #expect(!library.isLoaded)
        _ = try SoxrResampler(inputRate: 44100, outputRate: 48000, channels: 2, library: library)
        #expect(library.isLoaded)
        _ = try SoxrResampler(inputRate: 48000, outputRate: 44100, channels: 1, library: library)
        #expect(library.isLoaded)
    }

    @Test func aLibraryThatCannotBeLoadedFailsEveryResamplerAndIsReportedOnce() {
        let reports = Mutex<[String]>([])
        // zlib: it loads, but has none of libsoxr's functions.
        let library = SoxrLibrary(soname: "libz.so.1", reportFailure: { line in reports.withLock { $0.append(line) } })
        for _ in 0..<2 {
            #expect(throws: SoxrError.self) {
                _ = try SoxrResampler(inputRate: 44100, outputRate: 48000, channels: 2, library: library)
            }
        }
        #expect(!library.isLoaded)
        #expect(reports.withLock { $0 } == ["dlsym: soxr_io_spec not found in libz.so.1"])
    }

    @Test func aMissingLibraryFailsWithDlopensMessage() {
        let library = SoxrLibrary(soname: "libfermata-no-such-library.so.0", reportFailure: { _ in })
        do {
            _ = try SoxrResampler(inputRate: 44100, outputRate: 48000, channels: 2, library: library)
            Issue.record("created a resampler without libsoxr")
        } catch {
            #expect(error.message.hasPrefix("dlopen: libfermata-no-such-library.so.0: cannot open shared object file"))
        }
    }
}
