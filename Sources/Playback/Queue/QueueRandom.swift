// SPDX-License-Identifier: GPL-3.0-or-later

/// The queue's random numbers: SplitMix64, seeded from the system generator unless a test gives a seed.
public struct QueueRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator seeded from the system's random source.
    public init() {
        var system = SystemRandomNumberGenerator()
        self.state = system.next()
    }

    /// A generator that always produces the same sequence (tests).
    public init(seed: UInt64) {
        self.state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
