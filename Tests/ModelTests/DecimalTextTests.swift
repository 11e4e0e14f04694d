// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

struct DecimalTextTests {
    @Test func theWriterPutsKeysAndDecimalsUpToItsCapacity() {
        let bytes = DecimalWriter.bytes(capacity: 64) { writer in
            writer.put("a: ")
            writer.put(0)
            writer.put(" ")
            writer.put(Int.max)
            writer.put(" ")
            writer.put(-1)
            #expect(writer.count == 3 + 1 + 1 + 19 + 1 + 20)
        }
        #expect(String(decoding: bytes, as: UTF8.self) == "a: 0 \(Int.max) \(UInt.max)")
        #expect(DecimalWriter.bytes(capacity: 0) { _ in }.isEmpty)
    }

    @Test func iso8601TextCoversTheYears1970To9999Only() {
        var bytes: [UInt8] = []
        #expect(ISO8601Text.append(0, to: &bytes))
        #expect(ISO8601Text.append(951_782_400, to: &bytes))  // 2000-02-29
        #expect(ISO8601Text.append(253_402_300_799, to: &bytes))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "1970-01-01T00:00:00Z2000-02-29T00:00:00Z9999-12-31T23:59:59Z")
        #expect(!ISO8601Text.append(-1, to: &bytes))
        #expect(!ISO8601Text.append(253_402_300_800, to: &bytes))
        #expect(bytes.count == 60)
    }
}
