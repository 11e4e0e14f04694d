// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import ICU

struct ICUTests {
    @Test func rootCollationIgnoresCaseAtPrimaryLevel() {
        let sorted = ["b", "B", "a", "Ä", "A", "ä", "10", "9", "_x", "Z"].sorted(by: Collator.root.areInIncreasingOrder)
        #expect(sorted == ["_x", "10", "9", "a", "A", "ä", "Ä", "b", "B", "Z"])
    }
}
