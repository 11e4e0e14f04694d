// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Playback
import Testing

@Suite struct PipeOutputTests {
    @Test func feedsTheCommandsStandardInput() throws {
        let path = NSTemporaryDirectory() + "fermata-pipe-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = try PipeOutputPlugin().makeOutput(
            OutputConfiguration(name: "p", type: "pipe", parameters: ["command": "cat > '\(path)'"]))
        #expect(output.plugin == "pipe")
        let format = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
        #expect(try output.open(format) == format)
        let pcm = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var offset = 0
        while offset < pcm.count {
            offset += try pcm.withUnsafeBytes { try output.play(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
        }
        output.close()
        #expect(FileManager.default.contents(atPath: path) == Data(pcm))
    }

    @Test func needsACommand() {
        #expect(throws: OutputError.self) {
            try PipeOutputPlugin().makeOutput(OutputConfiguration(name: "p", type: "pipe"))
        }
    }
}
