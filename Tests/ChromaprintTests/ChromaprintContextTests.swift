// SPDX-License-Identifier: GPL-3.0-or-later

import Chromaprint
import Foundation
import TestTools
import Testing

@Suite struct ChromaprintContextTests {
    /// `seconds` of stereo "music" at `rate` Hz: a melody of notes a third apart, each 0.4 s long, so the chroma
    /// features libchromaprint hashes change over time.
    private func melody(seconds: Double, rate: Int = 44100) -> [Int16] {
        let frames = Int(seconds * Double(rate))
        var samples = [Int16](repeating: 0, count: frames * 2)
        let notes: [Double] = [220, 277.18, 329.63, 440, 369.99, 293.66, 246.94, 392]
        for frame in 0..<frames {
            let time = Double(frame) / Double(rate)
            let note = notes[Int(time / 0.4) % notes.count]
            let value = 0.3 * sin(2 * Double.pi * note * time) + 0.15 * sin(2 * Double.pi * note * 1.5 * time)
            samples[2 * frame] = Int16(value * 32767)
            samples[2 * frame + 1] = Int16(value * 0.8 * 32767)
        }
        return samples
    }

    private func fingerprint(_ samples: [Int16], rate: Int = 44100, channels: Int = 2, pieces: Int = 1) throws
        -> (text: String, raw: [UInt32])
    {
        let context = try ChromaprintContext()
        try context.start(sampleRate: rate, channels: channels)
        let size = (samples.count + pieces - 1) / pieces
        var offset = 0
        while offset < samples.count {
            let end = min(samples.count, offset + size)
            try context.feed(Array(samples[offset..<end]))
            offset = end
        }
        try context.finish()
        return (try context.fingerprint(), try context.rawFingerprint())
    }

    @Test func versionIsDebians() throws {
        #expect(try ChromaprintContext().version.hasPrefix("1."))
    }

    @Test func sonameComesFromTheHeadersMajorVersion() {
        #expect(ChromaprintLibrary.headerSoname == "libchromaprint.so.1")
    }

    /// The library is opened by the first context, counted per context, and stays loaded after the last.
    @Test func loadedOnFirstUseAndKept() throws {
        let library = ChromaprintLibrary(soname: ChromaprintLibrary.headerSoname)
        #expect(!library.isLoaded)
        #expect(library.loadCount == 0)
        var first: ChromaprintContext? = try ChromaprintContext(library: library)
        #expect(library.isLoaded)
        #expect(library.users == 1)
        let second = try ChromaprintContext(library: library)
        #expect(library.users == 2)
        #expect(library.loadCount == 1)
        try first?.start(sampleRate: 44100, channels: 2)
        first = nil
        #expect(library.users == 1)
        try second.start(sampleRate: 44100, channels: 2)
        try second.feed(self.melody(seconds: 1))
        try second.finish()
        #expect(try second.fingerprint() == "AQAAAA")
        _ = consume second
        #expect(library.users == 0)
        #expect(library.isLoaded)
        _ = try ChromaprintContext(library: library)
        #expect(library.loadCount == 1)
    }

    /// A library that cannot be loaded fails every context with the error of one libchromaprint cannot make, and
    /// is reported once with dlopen's reason.
    @Test func missingLibraryFailsEveryContextReportedOnce() {
        let reports = Reports()
        let library = ChromaprintLibrary(soname: "/nonexistent/libchromaprint.so.1", reportFailure: reports.reporter)
        for _ in 0..<3 {
            #expect(throws: ChromaprintError("chromaprint_new() failed")) { try ChromaprintContext(library: library) }
        }
        #expect(!library.isLoaded)
        #expect(library.users == 0)
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.contains("/nonexistent/libchromaprint.so.1") == true)
    }

    /// One second is too short for a single item: the empty fingerprint of the default algorithm (what `mpd`
    /// answers for short songs).
    @Test func shortAudioHasTheEmptyFingerprint() throws {
        let result = try self.fingerprint(self.melody(seconds: 1))
        #expect(result.text == "AQAAAA")
        #expect(result.raw.isEmpty)
    }

    /// Ten seconds give about one item per 0.124 s, after the first few seconds of filter delay; the text is
    /// the compressed form of the default algorithm (version byte 1: `AQ…`), URL-safe base64 without padding.
    @Test func melodyHasItems() throws {
        let result = try self.fingerprint(self.melody(seconds: 10))
        #expect(result.raw.count > 40 && result.raw.count < 81)
        #expect(result.text.hasPrefix("AQAA"))
        #expect(result.text != "AQAAAA")
        #expect(!result.text.contains("=") && !result.text.contains("+") && !result.text.contains("/"))
        // The items are not all alike: the melody changes.
        #expect(Set(result.raw).count > 5)
    }

    /// The fingerprint depends on the samples only, not on how they are split between calls.
    @Test func feedingInPiecesChangesNothing() throws {
        let samples = self.melody(seconds: 6)
        let whole = try self.fingerprint(samples)
        // An odd piece size splits frames between calls too.
        let pieces = try self.fingerprint(samples, pieces: 7)
        #expect(whole.text == pieces.text)
        #expect(whole.raw == pieces.raw)
    }

    /// Other audio, other fingerprint; the same audio at another level or rate, a similar one.
    @Test func differentAudioDiffers() throws {
        let melody = self.melody(seconds: 6)
        let reversed = try self.fingerprint(Array(melody.reversed()))
        let original = try self.fingerprint(melody)
        #expect(reversed.text != original.text)
        let mono = stride(from: 0, to: melody.count, by: 2).map { melody[$0] }
        let downmixed = try self.fingerprint(mono, channels: 1)
        #expect(downmixed.raw.count == original.raw.count)
    }

    /// A context computes a new fingerprint after each start.
    @Test func startingAgainStartsAfresh() throws {
        let samples = self.melody(seconds: 6)
        let context = try ChromaprintContext()
        try context.start(sampleRate: 44100, channels: 2)
        try context.feed(Array(samples.reversed()))
        try context.finish()
        try context.start(sampleRate: 44100, channels: 2)
        try context.feed(samples)
        try context.finish()
        #expect(try context.fingerprint() == (try self.fingerprint(samples)).text)
    }

    /// Formats libchromaprint refuses are errors, named after the call.
    @Test func refusedFormatsThrow() throws {
        let context = try ChromaprintContext()
        #expect(throws: ChromaprintError("chromaprint_start() failed")) {
            try context.start(sampleRate: 44100, channels: 0)
        }
        #expect(throws: ChromaprintError("chromaprint_start() failed")) {
            try context.start(sampleRate: Int(Int32.max) + 1, channels: 2)
        }
    }
}
