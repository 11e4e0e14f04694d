// SPDX-License-Identifier: GPL-3.0-or-later

internal import CICUShim

/// ICU's root collator, which `mpd` uses to order directories, songs and sorted results.
///
/// Safe from any thread: `ucol_strcollUTF8` on a shared, fully built collator is thread-safe.
/// `@unchecked Sendable`: the collator is opened once and never mutated afterwards.
public final class Collator: @unchecked Sendable {
    private let collator: OpaquePointer

    /// The root-locale collator (`ucol_open("")`), shared.
    public static let root = Collator()

    private init() {
        var status: Int32 = 0
        guard let collator = ficu_collator_open("", &status), status <= 0 else {
            // The root collator is built into libicudata; failing to open it means a broken installation.
            fatalError("ucol_open(\"\") failed: \(status)")
        }
        self.collator = collator
    }

    deinit { ficu_collator_close(self.collator) }

    /// Compares two UTF-8 strings as `mpd`'s `IcuCollate` does: negative, zero or positive.
    ///
    /// The corresponding C function is `ucol_strcollUTF8`.
    public func compare(_ a: String, _ b: String) -> Int {
        var a = a
        var b = b
        return a.withUTF8 { aBytes in
            b.withUTF8 { bBytes in
                var status: Int32 = 0
                let result = aBytes.withMemoryRebound(to: CChar.self) { aChars in
                    bBytes.withMemoryRebound(to: CChar.self) { bChars in
                        ficu_collator_compare_utf8(
                            self.collator, aChars.baseAddress, Int32(aChars.count), bChars.baseAddress,
                            Int32(bChars.count), &status)
                    }
                }
                return Int(result)
            }
        }
    }

    /// Whether `a` sorts before `b`.
    public func areInIncreasingOrder(_ a: String, _ b: String) -> Bool { self.compare(a, b) < 0 }
}
