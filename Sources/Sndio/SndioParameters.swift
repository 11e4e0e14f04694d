// SPDX-License-Identifier: GPL-3.0-or-later

import CSndio
import Model
import Playback
import Synchronization

/// A sndio output's keys, as `mpd` reads them: `device` (as written, even empty; libsndio's default device,
/// `default`, when absent) and `buffer_time` (milliseconds of buffer asked of the device, default 250; any
/// non-negative number).
struct SndioSettings: Equatable {
    /// libsndio's name for its default device (`SIO_DEVANY`).
    static let defaultDevice = String(cString: fermata_sndio_devany)
    /// `mpd`'s default `buffer_time`.
    static let defaultBufferTime: UInt32 = 250

    var device: String
    var bufferTime: UInt32

    /// - Throws: `Error in setting "buffer_time"; Failed to parse number` or `…; Value must not be negative`.
    init(_ configuration: OutputConfiguration) throws(OutputError) {
        self.device = configuration.parameters["device"] ?? Self.defaultDevice
        self.bufferTime = try configuration.unsigned("buffer_time", default: Self.defaultBufferTime)
    }
}

/// What a sndio output asks of the device for a song's format, and what it accepts, as `mpd`'s: 16-bit, 24-bit (in
/// 32) and 32-bit samples as they are, every other sample format converted to 16 bits; the song's rate and channel
/// count; signed, native byte order; a buffer of `buffer_time` milliseconds (`appbufsz`, in frames, computed in 32
/// bits as `mpd` computes it).
struct SndioRequest: Equatable {
    /// The format the output plays (the song's, with its sample format mapped).
    var format: AudioFormat
    var bits: UInt32
    var rate: UInt32
    var channels: UInt32
    var bufferFrames: UInt32

    init(_ format: AudioFormat, bufferTime: UInt32) {
        var opened = format
        switch format.sampleFormat {
        case .s16: self.bits = 16
        case .s24: self.bits = 24
        case .s32: self.bits = 32
        default:
            opened.sampleFormat = .s16
            self.bits = 16
        }
        self.format = opened
        self.rate = UInt32(truncatingIfNeeded: opened.sampleRate)
        self.channels = UInt32(truncatingIfNeeded: opened.channels)
        self.bufferFrames = self.rate &* bufferTime / 1000
    }

    /// Whether the parameters the device settled on (`sio_getpar`'s) play the request: the same bits, channels,
    /// signedness and byte order, and a rate within half a percent.
    func accepts(bits: UInt32, rate: UInt32, channels: UInt32, signed: UInt32, littleEndian: UInt32, native: UInt32)
        -> Bool
    {
        bits == self.bits && rate >= self.rate &* 995 / 1000 && rate <= self.rate &* 1005 / 1000
            && channels == self.channels && signed == 1 && littleEndian == native
    }
}

/// The volume of one sndio output, shared by the output (its thread) and its mixer (the event loop), as `mpd`'s
/// sndio mixer keeps it: a raw sndio volume (0...127, 127 at first) that lasts across streams. A non-global mixer:
/// it takes no volume before the output first tried to play, and answers only while a stream is open; a volume set
/// while none is open is ignored (and `setvol` succeeds);
/// a volume set while one is open is the raw value `percent * 127 / 100`, read back as `raw * 100 / 127`, and goes
/// to the device from the output thread before its next write. A device with no volume knob (a raw device) reads
/// 100 from then on. Changes the device reports (another program's) go to `onChange`.
///
/// Lock-free but for `onChange`, which is taken only when the device reports a different volume.
final class SndioVolume: Sendable {
    /// sndio's highest volume (`SIO_MAXVOL`).
    static let maximum = 127

    /// The raw volume; -1 once a device had no knob.
    private let raw = Atomic<Int>(SndioVolume.maximum)
    private let streamOpen = Atomic<Bool>(false)
    private let tried = Atomic<Bool>(false)
    /// A raw volume for the output thread to send, or -1.
    private let request = Atomic<Int>(-1)
    private let onChange = Mutex<(@Sendable () -> Void)?>(nil)

    /// The percentage `mpd` shows for a raw volume (100 with no knob).
    static func percent(raw: Int) -> Int { raw < 0 ? 100 : raw * 100 / Self.maximum }

    /// The raw volume `mpd` sends for a percentage.
    static func raw(percent: Int) -> Int { percent * Self.maximum / 100 }

    /// Tells `onChange` of the volume changes the device reports.
    func attach(onChange: @escaping @Sendable () -> Void) { self.onChange.withLock { $0 = onChange } }

    // MARK: Mixer (event loop)

    /// - Throws: `OutputError` while no stream is open (the mixer is closed: no volume to show).
    func percent() throws(OutputError) -> Int {
        guard self.streamOpen.load(ordering: .acquiring) else { throw OutputError("mixer not open") }
        return Self.percent(raw: self.raw.load(ordering: .relaxed))
    }

    /// Sets the volume while a stream is open; ignored otherwise.
    func set(percent: Int) {
        guard self.streamOpen.load(ordering: .acquiring) else { return }
        let raw = Self.raw(percent: percent)
        // The device echoes the volume sent, which mpd takes as its volume, unless the device has no knob.
        if self.raw.load(ordering: .relaxed) >= 0 { self.raw.store(raw, ordering: .relaxed) }
        self.request.store(raw, ordering: .releasing)
    }

    /// Whether the output ever tried to open a stream: `mpd` enables its outputs when they first play, and refuses
    /// a volume (`All outputs are disabled`) for the mixer of an output not enabled yet; from then on, disabling and
    /// enabling the output leaves the mixer usable.
    var wasTried: Bool { self.tried.load(ordering: .relaxed) }

    // MARK: Output thread

    /// The output is about to open a stream (whether or not the device opens).
    func trying() { self.tried.store(true, ordering: .relaxed) }

    /// The raw volume a new stream starts at (`nil`: the device had no knob).
    var initial: Int? {
        let raw = self.raw.load(ordering: .relaxed)
        return raw >= 0 ? raw : nil
    }

    /// A stream opened; `hasKnob` is whether its device reports volumes (else the volume reads 100 from now on).
    func opened(hasKnob: Bool) {
        if !hasKnob { self.raw.store(-1, ordering: .relaxed) }
        self.request.store(-1, ordering: .relaxed)
        self.streamOpen.store(true, ordering: .releasing)
    }

    /// The stream closed.
    func closed() { self.streamOpen.store(false, ordering: .releasing) }

    /// The raw volume set since the last call, to send to the device; `nil` when none. No lock, no allocation.
    func takeRequest() -> Int? {
        let raw = self.request.exchange(-1, ordering: .acquiringAndReleasing)
        return raw >= 0 ? raw : nil
    }

    /// The device reported `raw` (after a change by Fermata or by another program).
    func reported(_ raw: Int) {
        let old = self.raw.load(ordering: .relaxed)
        guard old >= 0, old != raw else { return }
        self.raw.store(raw, ordering: .relaxed)
        self.onChange.withLock { $0 }?()
    }
}
