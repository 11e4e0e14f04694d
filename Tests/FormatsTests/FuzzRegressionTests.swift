// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Foundation
import Model
import Testing

/// The files the `id3` and `mp3` fuzz targets once crashed on (`fuzz/regressions/`), replayed on the normal
/// build: each is read as the library reads it and decoded as the player does, and no decode call may report
/// more frames than its buffer holds. (`make fuzz-short` replays them through the fuzz targets too, under
/// AddressSanitizer.)
@Suite struct FuzzRegressionTests {
    static let files: [String] = ["id3", "mp3"].flatMap { target -> [String] in
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fuzz/regressions/\(target)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().map { directory.appendingPathComponent($0).path }
    }

    @Test func thereAreRegressionFiles() {
        #expect(Self.files.contains { $0.hasSuffix("/mp3/new-format-with-data") })
        #expect(Self.files.contains { $0.hasSuffix("/mp3/format-change-then-seek") })
    }

    @Test(arguments: Self.files)
    func readsAndDecodesWithinBounds(_ path: String) throws {
        let format = MP3Format()
        _ = try? format.readInfo(path: path)
        _ = try? format.readPicture(path: path)
        _ = try? format.readComments(path: path)
        guard var decoder = try? format.makeDecoder(path: path) else { return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        // As the `mp3` fuzz target does: decode, then seek and decode again (also after a decoding error).
        let total = decoder.totalFrames ?? 0
        for frame in [nil, 0, total / 2, total + 1000] {
            if let frame { _ = try? decoder.seek(toFrame: frame) }
            for _ in 0..<200 {
                guard let frames = try? decoder.decode(into: buffer), frames > 0 else { break }
                #expect(frames * decoder.format.frameSize <= buffer.count)
            }
        }
    }
}
