// SPDX-License-Identifier: GPL-3.0-or-later

/// Unicode case folding exactly as Debian's `mpd` 0.23.12 does it for case-insensitive filters (`search`…).
///
/// `mpd` is built with ICU there and folds both the needle and every haystack with `u_strFoldCase` and
/// `U_FOLD_CASE_DEFAULT`: *full* folding (`ß`→`ss`, `ﬁ`→`fi`, `İ`→`i̇`, final `ς`→`σ`, Cherokee to upper case,
/// fullwidth letters to fullwidth lower case), with no normalization (`é` and `e`+U+0301 stay different) and no
/// Turkish special case. It then compares UTF-8 bytes.
///
/// One quirk is part of the observable behaviour: `mpd` gives ICU an output buffer of twice the input's UTF-16
/// length, and when the folded text fills it exactly or overflows it, ICU reports a warning or an error and `mpd`
/// keeps the text *unfolded*. So `ß`, `ﬁ`, `İ`, `ŉ`, `ΐ`, `ßß` or `ΐa` fold to themselves while `Straße` folds to
/// `strasse`: `search title ß` finds a title `ß` but not `Straße` (verified on mpd 0.23.12). `ICU.CaseFold.fold`
/// does not do this, so index code must fold with this type (or `FoldedText`).
///
/// The mapping is a table taken from ICU 72, the version `mpd` links on Debian bookworm, rather than a call into
/// ICU: importing the `ICU` module here would make every Foundation-importing client of `Model` load two
/// conflicting sets of ICU headers. The table plus the quirk was checked against ICU 72 with `mpd`'s buffer size
/// for every code point and 100,000 random strings. Foundation's `folding(options: .caseInsensitive, locale:)`
/// is no substitute: it lower-cases Cherokee instead of folding it to upper case, and has no such quirk.
///
/// Pure and thread-safe.
public enum FilterCaseFold {
    /// Folds `text` as `mpd` folds a needle or a haystack before comparing them.
    ///
    /// Returns `text` itself (no copy) when folding changes nothing.
    public static func fold(_ text: String) -> String {
        var isASCII = true
        var hasUpper = false
        for byte in text.utf8 {
            if byte >= 0x80 {
                isASCII = false
                break
            }
            if byte &- 0x41 < 26 { hasUpper = true }
        }
        if isASCII {
            guard hasUpper else { return text }
            // ASCII folds to ASCII of the same length, so the buffer quirk cannot apply.
            return String(unsafeUninitializedCapacity: text.utf8.count) { buffer in
                var index = 0
                for byte in text.utf8 {
                    buffer[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                    index += 1
                }
                return index
            }
        }
        return self.foldUnicode(text)
    }

    private static func foldUnicode(_ text: String) -> String {
        let table = self.table
        var changed = false
        var sourceUnits = 0
        var foldedUnits = 0
        var foldedBytes = 0
        for scalar in text.unicodeScalars {
            let units = scalar.value > 0xFFFF ? 2 : 1
            sourceUnits += units
            let entry = table.entry(scalar.value)
            if entry == 0 {
                foldedUnits += units
                foldedBytes += UTF8.width(scalar)
                continue
            }
            changed = true
            table.forEachScalar(of: entry) { folded in
                foldedUnits += folded.value > 0xFFFF ? 2 : 1
                foldedBytes += UTF8.width(folded)
            }
        }
        // `mpd`'s buffer holds 2 × the source's UTF-16 units; filling or overflowing it keeps the text unfolded.
        guard changed, foldedUnits < 2 * sourceUnits else { return text }
        return String(unsafeUninitializedCapacity: foldedBytes) { buffer in
            var index = 0
            func put(_ scalar: Unicode.Scalar) {
                UTF8.encode(scalar) { byte in
                    buffer[index] = byte
                    index += 1
                }
            }
            for scalar in text.unicodeScalars {
                let entry = table.entry(scalar.value)
                if entry == 0 { put(scalar) } else { table.forEachScalar(of: entry, put) }
            }
            return index
        }
    }

    /// The parsed folding table.
    static let table = Table(parsing: FilterCaseFold.tableSource)

    /// A two-level lookup: 256-entry pages for code points below U+20000, where all foldings live.
    struct Table: Sendable {
        /// Page number per 256 code points; 0 is the all-unchanged page.
        private var pageIndex: [UInt16]
        /// Page contents: 0 unchanged; a scalar value; or `multiFlag | offset << 2 | count` into `multi`.
        private var entries: [UInt32]
        /// The targets of one-to-many foldings.
        private var multi: [UInt32]

        private static let multiFlag: UInt32 = 0x8000_0000
        private static let limit: UInt32 = 0x20000

        init(parsing source: String) {
            self.pageIndex = [UInt16](repeating: 0, count: Int(Table.limit >> 8))
            self.entries = [UInt32](repeating: 0, count: 256)
            self.multi = []
            for record in source.split(whereSeparator: { $0 == ";" || $0 == "\n" }) {
                let parts = record.split(separator: ":")
                guard parts.count == 2, let from = UInt32(parts[0], radix: 16) else {
                    preconditionFailure("bad case-fold record \(record)")
                }
                let targets = parts[1].split(separator: " ").map { UInt32($0, radix: 16)! }
                precondition(from < Table.limit && (1...3).contains(targets.count))
                let page = Int(from >> 8)
                if self.pageIndex[page] == 0 {
                    self.pageIndex[page] = UInt16(self.entries.count / 256)
                    self.entries.append(contentsOf: repeatElement(0, count: 256))
                }
                let slot = Int(self.pageIndex[page]) * 256 + Int(from & 0xFF)
                if targets.count == 1 {
                    self.entries[slot] = targets[0]
                } else {
                    self.entries[slot] = Table.multiFlag | UInt32(self.multi.count) << 2 | UInt32(targets.count)
                    self.multi.append(contentsOf: targets)
                }
            }
        }

        /// The raw entry for `value`: 0 when it folds to itself.
        @inline(__always)
        func entry(_ value: UInt32) -> UInt32 {
            guard value < Table.limit else { return 0 }
            let page = Int(self.pageIndex[Int(value >> 8)])
            return page == 0 ? 0 : self.entries[page * 256 + Int(value & 0xFF)]
        }

        /// Calls `body` with each scalar a non-zero entry folds to.
        @inline(__always)
        func forEachScalar(of entry: UInt32, _ body: (Unicode.Scalar) -> Void) {
            if entry & Table.multiFlag == 0 {
                body(Unicode.Scalar(entry)!)
                return
            }
            let offset = Int((entry & ~Table.multiFlag) >> 2)
            for index in offset..<offset + Int(entry & 3) { body(Unicode.Scalar(self.multi[index])!) }
        }
    }
}
