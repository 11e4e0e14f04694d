// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Converts DSD (bytes of 8 one-bit samples, most significant bit first, channels interleaved per byte) to PCM
/// at one eighth of the bit rate, as `mpd` does for an output that does not take DSD: the `dsd2pcm` method, a
/// 96-tap symmetric low-pass FIR over the bit stream, evaluated once per byte (an 8:1 decimation), so DSD64
/// (2.8224 Mbit/s, `sampleRate` 352800) becomes 352800 Hz PCM.
///
/// Each channel keeps the last 16 bytes in a ring. The FIR's 96 taps span 12 bytes: the newest 6 bytes meet
/// one half of the taps, the 6 before them the mirrored half, so those are kept with their bits reversed (a
/// byte is reversed once it becomes the 7th newest). Both halves are looked up 8 taps at a time in 6 tables of
/// 256 sums (one per byte value), made once. Like `mpd`, float output adds the float table sums in double
/// precision; 24-bit output adds integer tables (the float sums scaled by 2²³ − 1, truncated). A fresh stream
/// starts from the silence pattern 0x69 in every ring.
///
/// Not thread-safe: owned by one output thread's converter. Its state and tables are made by `init`;
/// `translate` and `reset` do not allocate.
struct DSDToPCM: ~Copyable {
    /// Channels handled at most (`mpd`'s `MAX_CHANNELS`).
    static let maxChannels = 8
    private static let ringSize = 16
    private static let tables = 6

    /// The rings, `ringSize` bytes per channel.
    private let rings: UnsafeMutablePointer<UInt8>
    /// Where the next byte goes in every ring.
    private let position: UnsafeMutablePointer<Int>
    /// `tables` × 256 sums of 8 taps, as floats and as 24-bit integers.
    private let floatTables: UnsafeMutablePointer<Float>
    private let integerTables: UnsafeMutablePointer<Int32>
    /// Byte values with their bits in the opposite order.
    private let reversed: UnsafeMutablePointer<UInt8>

    init() {
        self.rings = .allocate(capacity: Self.maxChannels * Self.ringSize)
        self.position = .allocate(capacity: 1)
        self.floatTables = .allocate(capacity: Self.tables * 256)
        self.integerTables = .allocate(capacity: Self.tables * 256)
        self.reversed = .allocate(capacity: 256)
        for value in 0..<256 {
            var result: UInt8 = 0
            for bit in 0..<8 where value & (1 << bit) != 0 { result |= 0x80 >> UInt8(bit) }
            self.reversed[value] = result
        }
        for table in 0..<Self.tables {
            // Table 0 is for the newest byte, which meets the outermost 8 taps of this half.
            let group = Self.tables - 1 - table
            for value in 0..<256 {
                var sum = 0.0
                for tap in 0..<8 {
                    let sign = (value >> (7 - tap)) & 1 == 1 ? 1.0 : -1.0
                    sum += sign * Self.halfTaps[group * 8 + tap]
                }
                let float = Float(sum)
                self.floatTables[table * 256 + value] = float
                self.integerTables[table * 256 + value] = Int32(float * Float(8_388_607))
            }
        }
        self.reset()
    }

    deinit {
        self.rings.deallocate()
        self.position.deallocate()
        self.floatTables.deallocate()
        self.integerTables.deallocate()
        self.reversed.deallocate()
    }

    /// Starts a fresh stream: every ring full of the silence pattern 0x69.
    ///
    /// Does not allocate.
    func reset() {
        self.rings.update(repeating: 0x69, count: Self.maxChannels * Self.ringSize)
        self.position.pointee = 0
    }

    /// Converts `frames` frames of `channels` DSD bytes each into as many PCM frames of floats, interleaved:
    /// full-scale float samples (`integer24` false) or 24-bit integer sums divided by 2²³ (`integer24` true,
    /// `mpd`'s path for integer outputs).
    ///
    /// Audio path: no allocation. `channels` is at most `maxChannels`.
    func translate(
        _ source: UnsafeRawBufferPointer, frames: Int, channels: Int, integer24: Bool,
        into target: UnsafeMutablePointer<Float>
    ) {
        precondition(channels <= Self.maxChannels && source.count >= frames * channels)
        let mask = Self.ringSize - 1
        var position = self.position.pointee
        for frame in 0..<frames {
            for channel in 0..<channels {
                let ring = self.rings + channel * Self.ringSize
                ring[position] = source[frame * channels + channel]
                let older = (position &- Self.tables) & mask
                ring[older] = self.reversed[Int(ring[older])]
                let sample: Float
                if integer24 {
                    var sum: Int32 = 0
                    for table in 0..<Self.tables {
                        let newer = Int(ring[(position &- table) & mask])
                        let mirrored = Int(ring[(position &- (2 * Self.tables - 1) &+ table) & mask])
                        sum &+= self.integerTables[table * 256 + newer] &+ self.integerTables[table * 256 + mirrored]
                    }
                    sample = Float(sum) / 8_388_608
                } else {
                    var sum = 0.0
                    for table in 0..<Self.tables {
                        let newer = Int(ring[(position &- table) & mask])
                        let mirrored = Int(ring[(position &- (2 * Self.tables - 1) &+ table) & mask])
                        sum += Double(self.floatTables[table * 256 + newer] + self.floatTables[table * 256 + mirrored])
                    }
                    sample = Float(sum)
                }
                target[frame * channels + channel] = sample
            }
            position = (position + 1) & mask
        }
        self.position.pointee = position
    }

    // The filter: the second half (48 coefficients) of dsd2pcm's 96-tap symmetric low-pass FIR (flat to
    // 48 kHz at 64 × 44.1 kHz, about 160 dB stop-band rejection), so that the output matches `mpd`'s.
    //
    // The coefficients come from dsd2pcm, which carries this notice:
    //
    // Copyright 2009, 2011 Sebastian Gesemann. All rights reserved.
    //
    // Redistribution and use in source and binary forms, with or without modification, are permitted provided
    // that the following conditions are met:
    //    1. Redistributions of source code must retain the above copyright notice, this list of conditions and
    //       the following disclaimer.
    //    2. Redistributions in binary form must reproduce the above copyright notice, this list of conditions
    //       and the following disclaimer in the documentation and/or other materials provided with the
    //       distribution.
    //
    // THIS SOFTWARE IS PROVIDED BY SEBASTIAN GESEMANN ''AS IS'' AND ANY EXPRESS OR IMPLIED WARRANTIES,
    // INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR
    // PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL SEBASTIAN GESEMANN OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT,
    // INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO,
    // PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION)
    // HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING
    // NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
    // POSSIBILITY OF SUCH DAMAGE.
    private static let halfTaps: [Double] = [
        0.09950731974056658, 0.09562845727714668, 0.08819647126516944, 0.07782552527068175,
        0.06534876523171299, 0.05172629311427257, 0.0379429484910187, 0.02490921351762261,
        0.0133774746265897, 0.003883043418804416, -0.003284703416210726, -0.008080250212687497,
        -0.01067241812471033, -0.01139427235000863, -0.0106813877974587, -0.009007905078766049,
        -0.006828859761015335, -0.004535184322001496, -0.002425035959059578, -0.0006922187080790708,
        0.0005700762133516592, 0.001353838005269448, 0.001713709169690937, 0.001742046839472948,
        0.001545601648013235, 0.001226696225277855, 0.0008704322683580222, 0.0005381636200535649,
        0.000266446345425276, 7.002968738383528e-05, -5.279407053811266e-05, -0.0001140625650874684,
        -0.0001304796361231895, -0.0001189970287491285, -9.396247155265073e-05, -6.577634378272832e-05,
        -4.07492895872535e-05, -2.17407957554587e-05, -9.163058931391722e-06, -2.017460145032201e-06,
        1.249721855219005e-06, 2.166655190537392e-06, 1.930520892991082e-06, 1.319400334374195e-06,
        7.410039764949091e-07, 3.423230509967409e-07, 1.244182214744588e-07, 3.130441005359396e-08,
    ]
}
