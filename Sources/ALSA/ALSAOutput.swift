// SPDX-License-Identifier: GPL-3.0-or-later

import CALSA
import Glibc
import Model
import Playback
import Synchronization

#if !_endian(little)
    #error("ALSAOutput maps Fermata's native-endian samples to the _LE ALSA formats")
#endif

/// An ALSA PCM device: `type "alsa"`.
///
/// Writes through `snd_pcm_writei` in non-blocking mode, waiting in `poll` on the device's descriptors plus an
/// eventfd so that ``interrupt()`` can end any wait at once. Created on the event loop thread, then used only on its
/// output thread, except ``interrupt()`` and the attributes (any thread).
///
/// `@unchecked Sendable`: the stream state is touched only by the output thread (the protocol's contract); the
/// cross-thread parts (`wakeup`, `dop`) are atomics.
public final class ALSAOutput: AudioOutput, @unchecked Sendable {
    /// `alsa`.
    public let plugin = "alsa"

    /// The ALSA device name (`device`, default `default`).
    public let device: String
    /// `buffer_time` in microseconds (default 500000).
    public let bufferTime: UInt32
    /// `period_time` in microseconds; 0 means a quarter of the buffer time.
    public let periodTime: UInt32
    /// `snd_pcm_open` mode flags from `auto_resample`, `auto_channels`, `auto_format`.
    let openMode: Int32
    /// A configuration tree used instead of the system's (tests).
    let localConfiguration: ALSALocalConfiguration?

    private let wakeup: InterruptibleWait
    /// What a ``pause()`` waits on: the system's monotonic clock, or a test's.
    private let clock: any PlaybackClock
    private let dop = Atomic<Bool>(false)

    // MARK: Stream state (output thread only)

    private var pcm: OpaquePointer?
    private var wire = PCMWireFormat(sampleFormat: .s16)
    private var channels = 2
    private var inputFrameSize = 4
    private var outputFrameSize = 4
    private var periodFrames = 1
    private var canPause = false
    /// A drop or drain left the device in SETUP: prepare before the next write.
    private var mustPrepare = false
    /// Something was written since the last prepare (drain has work to do).
    private var written = false
    private var exportBuffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var exportFrames = 0
    private var descriptors: UnsafeMutablePointer<pollfd>?
    private var descriptorCapacity = 0
    /// DSD over PCM: the stream is DSD, sent as 24-bit DoP words at half its `sampleRate`.
    private var dopActive = false
    /// The device took 32-bit samples only: DoP words go 8 bits up (as `mpd`'s `shift8`).
    private var dopShift8 = false
    /// DoP words made and not yet written: frames `dopStart..<dopEnd` of `dopBuffer` (room for `dopCapacity`).
    private var dopBuffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var dopCapacity = 0
    private var dopStart = 0
    private var dopEnd = 0
    /// DSD frames (fewer than 4) waiting for the rest of their block of 4, which makes two DoP frames.
    private let dopRest = UnsafeMutablePointer<UInt8>.allocate(capacity: 4 * 8)
    private var dopRestFrames = 0

    /// How long one wait for the device may last before writing is tried again.
    private var waitMilliseconds: Int32 {
        Int32(clamping: max(10, Int(self.periodTime == 0 ? self.bufferTime / 4 : self.periodTime) / 1000))
    }

    /// How often ``drain()`` looks whether the device has finished.
    static let drainPollMilliseconds: Int32 = 10

    /// The longest a ``pause()`` call blocks when not interrupted (nanoseconds of its clock).
    static let pauseWaitNanoseconds: UInt64 = 1_000_000_000

    /// Creates an output for `device`. Any thread.
    ///
    /// - Parameters:
    ///   - device: The ALSA PCM name.
    ///   - bufferTime: Microseconds of audio the device buffers (`buffer_time`).
    ///   - periodTime: Microseconds per period (`period_time`); 0 for a quarter of `bufferTime`.
    ///   - autoResample: `auto_resample`: let alsa-lib resample.
    ///   - autoChannels: `auto_channels`: let alsa-lib convert channels.
    ///   - autoFormat: `auto_format`: let alsa-lib convert sample formats.
    ///   - dop: `dop`: DSD goes to the device as DSD over PCM (see ``open(_:)``).
    /// - Throws: when the wake-up descriptor cannot be created.
    public convenience init(
        device: String = "default", bufferTime: UInt32 = 500_000, periodTime: UInt32 = 0, autoResample: Bool = true,
        autoChannels: Bool = true, autoFormat: Bool = true, dop: Bool = false
    ) throws(OutputError) {
        try self.init(
            device: device, bufferTime: bufferTime, periodTime: periodTime,
            openMode: Self.openMode(autoResample: autoResample, autoChannels: autoChannels, autoFormat: autoFormat),
            dop: dop, localConfiguration: nil)
    }

    init(
        device: String, bufferTime: UInt32, periodTime: UInt32, openMode: Int32, dop: Bool,
        localConfiguration: ALSALocalConfiguration?, clock: any PlaybackClock = SystemClock()
    ) throws(OutputError) {
        self.clock = clock
        self.device = device
        self.bufferTime = bufferTime
        self.periodTime = periodTime
        self.openMode = openMode
        self.localConfiguration = localConfiguration
        self.wakeup = try InterruptibleWait()
        self.dop.store(dop, ordering: .relaxed)
    }

    deinit {
        self.close()
        self.dopRest.deallocate()
    }

    static func openMode(autoResample: Bool, autoChannels: Bool, autoFormat: Bool) -> Int32 {
        (autoResample ? 0 : SND_PCM_NO_AUTO_RESAMPLE) | (autoChannels ? 0 : SND_PCM_NO_AUTO_CHANNELS)
            | (autoFormat ? 0 : SND_PCM_NO_AUTO_FORMAT)
    }

    // MARK: - Attributes

    /// `allowed_formats` (always empty: not supported) and `dop`, as `mpd` lists them. Any thread.
    public var attributes: [(name: String, value: String)] {
        [("allowed_formats", ""), ("dop", self.dop.load(ordering: .relaxed) ? "1" : "0")]
    }

    /// `outputset … dop 0|1`. Any thread.
    ///
    /// - Throws: `Bad 'dop' value`; `allowed_formats` is not supported; other names are unknown.
    public func setAttribute(name: String, value: String) throws(OutputError) {
        switch name {
        case "dop":
            guard value == "0" || value == "1" else { throw OutputError("Bad 'dop' value") }
            self.dop.store(value == "1", ordering: .relaxed)
        case "allowed_formats":
            throw OutputError("allowed_formats is not supported by Fermata")
        default:
            throw OutputError("Unsupported attribute")
        }
    }

    // MARK: - Stream

    /// Opens the device and negotiates a format. Output thread.
    ///
    /// With `dop` on, DSD is sent as DSD over PCM, as `mpd` does: 24-bit samples at half the DSD format's
    /// `sampleRate` (DSD64: 176400 Hz), each carrying two DSD bytes of one channel under the marker 0x05 or 0xFA
    /// (alternating), bit for bit, so the device must take exactly that rate and 24 bits (or 32 bits, shifted);
    /// otherwise the device is opened as without `dop` (native DSD, else PCM).
    /// - Returns: `format`, or the nearest the device takes (another sample format, rate or channel count); for
    ///   DSD over PCM, `format` itself (``play(_:)`` takes DSD).
    /// - Throws: `Failed to open ALSA device "x": reason`, or `Error opening ALSA device "x"; reason` when the device
    ///   refuses every format or the buffer settings.
    public func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        self.close()
        _ = self.wakeup.consume()
        if self.dop.load(ordering: .relaxed), format.sampleFormat == .dsd, format.channels <= 8,
            let (handle, setup) = try? self.openDevice(
                AudioFormat(sampleRate: format.sampleRate / 2, sampleFormat: .s24, channels: format.channels))
        {
            let wanted = AudioFormat(sampleRate: format.sampleRate / 2, sampleFormat: .s24, channels: format.channels)
            var got = setup.format
            if got.sampleFormat == .s32 { got.sampleFormat = .s24 }
            if got == wanted {
                self.install(handle, setup, dsdOverPCM: true)
                self.dopActive = true
                self.dopShift8 = setup.format.sampleFormat == .s32
                self.inputFrameSize = format.channels
                self.dopCapacity = max(2, setup.bufferFrames)
                self.dopBuffer = .allocate(byteCount: self.dopCapacity * format.channels * 4, alignment: 16)
                return format
            }
            // No bit-perfect DoP: as without `dop`.
            snd_pcm_close(handle)
        }
        let (handle, setup) = try self.openDevice(format)
        self.install(handle, setup)
        return setup.format
    }

    /// Opens the PCM and sets it up for `format` (or the nearest it takes).
    private func openDevice(_ format: AudioFormat) throws(OutputError) -> (OpaquePointer, ALSAHardwareSetup) {
        var handle: OpaquePointer?
        let result =
            if let local = self.localConfiguration {
                snd_pcm_open_lconf(&handle, self.device, SND_PCM_STREAM_PLAYBACK, self.openMode, local.tree)
            } else {
                snd_pcm_open(&handle, self.device, SND_PCM_STREAM_PLAYBACK, self.openMode)
            }
        guard result >= 0, let handle else {
            throw ALSAError.error("Failed to open ALSA device \"\(self.device)\"", result)
        }
        let setup: ALSAHardwareSetup
        do throws(OutputError) {
            setup = try ALSAHardwareSetup(
                pcm: handle, requested: format, bufferTime: self.bufferTime, periodTime: self.periodTime)
            let nonBlock = snd_pcm_nonblock(handle, 1)
            guard nonBlock >= 0 else { throw ALSAError.error("snd_pcm_nonblock() failed", nonBlock) }
        } catch {
            snd_pcm_close(handle)
            throw OutputError("Error opening ALSA device \"\(self.device)\"; \(error.message)")
        }
        return (handle, setup)
    }

    /// Keeps an opened PCM and its setup as the stream.
    private func install(_ handle: OpaquePointer, _ setup: ALSAHardwareSetup, dsdOverPCM: Bool = false) {
        self.pcm = handle
        self.wire = setup.wire.ordering(channels: setup.format.channels, dsdOverPCM: dsdOverPCM)
        self.channels = setup.format.channels
        self.inputFrameSize = setup.format.frameSize
        self.outputFrameSize = setup.wire.bytesPerSample * setup.format.channels
        self.periodFrames = setup.periodFrames
        self.canPause = setup.canPause
        self.mustPrepare = false
        self.written = false
        if self.wire.needsExport {
            self.exportFrames = max(1, setup.bufferFrames)
            self.exportBuffer = .allocate(byteCount: self.exportFrames * self.outputFrameSize, alignment: 16)
        }
        self.descriptorCapacity = Int(max(0, snd_pcm_poll_descriptors_count(handle))) + 1
        self.descriptors = .allocate(capacity: self.descriptorCapacity)
    }

    /// Closes the device (without draining). Output thread.
    public func close() {
        if let pcm = self.pcm {
            snd_pcm_close(pcm)
            self.pcm = nil
        }
        if self.exportBuffer.baseAddress != nil {
            self.exportBuffer.deallocate()
            self.exportBuffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
            self.exportFrames = 0
        }
        if let descriptors = self.descriptors {
            descriptors.deallocate()
            self.descriptors = nil
            self.descriptorCapacity = 0
        }
        if self.dopBuffer.baseAddress != nil {
            self.dopBuffer.deallocate()
            self.dopBuffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        }
        self.dopActive = false
        self.dropDoP()
    }

    /// Writes some of `data`, waiting for room in the device's buffer. Output thread; audio path (no allocation,
    /// lock or log).
    ///
    /// Recovers from underruns (`-EPIPE`) and suspends (`-ESTRPIPE`) with `snd_pcm_recover`, resumes a paused stream.
    /// - Returns: bytes consumed, a whole number of frames; 0 only when ``interrupt()`` ended the wait.
    /// - Throws: `snd_pcm_writei() failed: reason` when the device is gone or broken.
    public func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        guard let pcm = self.pcm else { throw OutputError("ALSA device \"\(self.device)\" is not open") }
        if self.dopActive { return try self.playDoP(data, pcm) }
        var frames = data.count / self.inputFrameSize
        precondition(frames > 0, "play needs at least one whole frame")
        var source = data.baseAddress
        if self.wire.needsExport {
            frames = min(frames, self.exportFrames)
            self.wire.export(data, frames: frames, channels: self.channels, into: self.exportBuffer)
            source = UnsafeRawPointer(self.exportBuffer.baseAddress)
        }
        while true {
            if self.wakeup.consume() { return 0 }
            try self.prepareIfNeeded(pcm)
            let result = snd_pcm_writei(pcm, source, snd_pcm_uframes_t(frames))
            if result > 0 {
                self.written = true
                return Int(result) * self.inputFrameSize
            }
            if result == 0 || result == -Int(EAGAIN) {
                if self.waitForDevice(pcm) { return 0 }
                continue
            }
            let recovered = snd_pcm_recover(pcm, Int32(truncatingIfNeeded: result), 1)
            guard recovered >= 0 else { throw ALSAError.error("snd_pcm_writei() failed", result) }
            self.written = false
        }
    }

    /// Frames written but not yet played (`snd_pcm_delay`), 0 when closed or unknown; for DSD over PCM, DSD
    /// frames (two per DoP frame). Output thread.
    public var delayFrames: Int {
        guard let pcm = self.pcm else { return 0 }
        var delay: snd_pcm_sframes_t = 0
        guard snd_pcm_delay(pcm, &delay) >= 0 else { return 0 }
        return max(0, delay) * (self.dopActive ? 2 : 1)
    }

    // MARK: - DSD over PCM

    /// ``play(_:)`` for DSD over PCM: first the DoP words an interrupted call left, then `data` made into DoP
    /// words (in blocks of 4 DSD frames; a shorter rest waits for the next call), written until the device took
    /// them all or ``interrupt()`` ends the wait (what is left is written by the next call).
    private func playDoP(_ data: UnsafeRawBufferPointer, _ pcm: OpaquePointer) throws(OutputError) -> Int {
        precondition(data.count >= self.channels, "play needs at least one whole frame")
        if self.dopStart < self.dopEnd, !(try self.writeDoP(pcm)) { return 0 }
        let consumed = self.makeDoP(data)
        _ = try self.writeDoP(pcm)
        return consumed
    }

    /// Fills `dopBuffer` from `dopRest` and `data`. Returns the bytes of `data` used (whole frames).
    private func makeDoP(_ data: UnsafeRawBufferPointer) -> Int {
        let channels = self.channels
        let frames = data.count / channels
        var used = 0
        self.dopStart = 0
        self.dopEnd = 0
        if self.dopRestFrames > 0 {
            let take = min(4 - self.dopRestFrames, frames)
            for index in 0..<(take * channels) {
                self.dopRest[self.dopRestFrames * channels + index] = data[index]
            }
            self.dopRestFrames += take
            used = take
            guard self.dopRestFrames == 4 else { return used * channels }
            self.dopBlock(UnsafeRawPointer(self.dopRest))
            self.dopRestFrames = 0
        }
        let blocks = min((frames - used) / 4, (self.dopCapacity - self.dopEnd) / 2)
        for block in 0..<blocks {
            self.dopBlock(data.baseAddress! + (used + block * 4) * channels)
        }
        used += blocks * 4
        let left = frames - used
        if left > 0, left < 4 {
            for index in 0..<(left * channels) { self.dopRest[index] = data[used * channels + index] }
            self.dopRestFrames = left
            used = frames
        }
        return used * channels
    }

    /// Two DoP frames at `dopEnd` from 4 DSD frames at `source`.
    private func dopBlock(_ source: UnsafeRawPointer) {
        let channels = self.channels
        let bytes = source.assumingMemoryBound(to: UInt8.self)
        let words = self.dopBuffer.baseAddress!.assumingMemoryBound(to: UInt32.self) + self.dopEnd * channels
        let shift: UInt32 = self.dopShift8 ? 8 : 0
        for channel in 0..<channels {
            let first = UInt32(bytes[channel]) << 8 | UInt32(bytes[channels + channel])
            let second = UInt32(bytes[2 * channels + channel]) << 8 | UInt32(bytes[3 * channels + channel])
            words[channel] = (0xFF05_0000 | first) << shift
            words[channels + channel] = (0xFFFA_0000 | second) << shift
        }
        self.dopEnd += 2
    }

    /// Writes `dopBuffer`'s pending frames. Returns `false` when ``interrupt()`` ended a wait first.
    private func writeDoP(_ pcm: OpaquePointer) throws(OutputError) -> Bool {
        let frameBytes = self.channels * 4
        while self.dopStart < self.dopEnd {
            var frames = self.dopEnd - self.dopStart
            let pending = UnsafeRawBufferPointer(
                rebasing: self.dopBuffer[(self.dopStart * frameBytes)..<(self.dopEnd * frameBytes)])
            var source = pending.baseAddress
            if self.wire.needsExport {
                frames = min(frames, self.exportFrames)
                self.wire.export(pending, frames: frames, channels: self.channels, into: self.exportBuffer)
                source = UnsafeRawPointer(self.exportBuffer.baseAddress)
            }
            if self.wakeup.consume() { return false }
            try self.prepareIfNeeded(pcm)
            let result = snd_pcm_writei(pcm, source, snd_pcm_uframes_t(frames))
            if result > 0 {
                self.written = true
                self.dopStart += Int(result)
                continue
            }
            if result == 0 || result == -Int(EAGAIN) {
                if self.waitForDevice(pcm) { return false }
                continue
            }
            let recovered = snd_pcm_recover(pcm, Int32(truncatingIfNeeded: result), 1)
            guard recovered >= 0 else { throw ALSAError.error("snd_pcm_writei() failed", result) }
            self.written = false
        }
        return true
    }

    /// Forgets DoP words and DSD frames not written yet.
    private func dropDoP() {
        self.dopStart = 0
        self.dopEnd = 0
        self.dopRestFrames = 0
    }

    /// Plays out everything written, waiting (interruptibly) until the device has. Output thread.
    ///
    /// - Returns: `false` when ``interrupt()`` ended the wait; the device keeps draining what is left (call
    ///   again to wait for it, or ``cancel()`` to drop it).
    public func drain() throws(OutputError) -> Bool {
        guard let pcm = self.pcm, self.written else { return true }
        while true {
            switch snd_pcm_state(pcm) {
            case SND_PCM_STATE_PREPARED, SND_PCM_STATE_RUNNING:
                let result = snd_pcm_drain(pcm)
                if result == 0 {
                    self.drained()
                    return true
                }
                guard result == -EAGAIN else { throw ALSAError.error("snd_pcm_drain() failed", result) }
            case SND_PCM_STATE_DRAINING:
                break
            default:
                self.drained()
                return true
            }
            // A draining device stays writable, so its descriptors would wake us at once: sleep a little instead.
            if let descriptors = self.descriptors,
                self.wakeup.wait(descriptors, count: 0, timeoutMilliseconds: Self.drainPollMilliseconds)
            {
                return false
            }
        }
    }

    /// After a drain the device is in SETUP: prepared again before the next write.
    private func drained() {
        self.mustPrepare = true
        self.written = false
    }

    /// Drops everything written and not yet played (`snd_pcm_drop`; prepared again before the next write).
    /// Output thread.
    public func cancel() {
        _ = self.wakeup.consume()
        self.dropDoP()
        guard let pcm = self.pcm else { return }
        snd_pcm_drop(pcm)
        self.mustPrepare = true
        self.written = false
    }

    public var hasPauseMode: Bool { true }
    /// Pauses with `snd_pcm_pause` when the device can, then waits up to a second of its clock (or until
    /// ``interrupt()``). Output thread.
    ///
    /// - Returns: `false` when the device cannot pause (the output thread then closes it and reopens on resume).
    public func pause() -> Bool {
        guard let pcm = self.pcm else { return false }
        if self.wakeup.consume() { return true }
        switch Self.pauseAction(state: PCMState(snd_pcm_state(pcm)), canPause: self.canPause) {
        case .pauseDevice:
            guard snd_pcm_pause(pcm, 1) >= 0 else { return false }
        case .nothingPlaying:
            break
        case .cannotPause:
            return false
        }
        _ = self.wakeup.sleep(until: self.clock.now() + Self.pauseWaitNanoseconds, on: self.clock)
        return true
    }

    /// Ends a wait in ``play(_:)``, ``drain()`` or ``pause()`` soon. Any thread.
    public func interrupt() { self.wakeup.interrupt() }

    // MARK: - Helpers

    /// What ``pause()`` does in a device state.
    enum PauseAction: Equatable {
        /// `snd_pcm_pause(1)`.
        case pauseDevice
        /// Nothing is sounding (not started, stopped, already paused): just wait.
        case nothingPlaying
        /// The device cannot hold the stream: report `false`.
        case cannotPause
    }

    /// The device states ``pause()`` tells apart.
    enum PCMState: Equatable {
        case running, paused, prepared, setup, other

        init(_ state: snd_pcm_state_t) {
            switch state {
            case SND_PCM_STATE_RUNNING: self = .running
            case SND_PCM_STATE_PAUSED: self = .paused
            case SND_PCM_STATE_PREPARED: self = .prepared
            case SND_PCM_STATE_SETUP: self = .setup
            default: self = .other
            }
        }
    }

    /// Chooses what ``pause()`` does, from the device's state and `snd_pcm_hw_params_can_pause`.
    static func pauseAction(state: PCMState, canPause: Bool) -> PauseAction {
        switch state {
        case .running: canPause ? .pauseDevice : .cannotPause
        case .paused, .prepared, .setup: .nothingPlaying
        case .other: .cannotPause
        }
    }

    private func prepareIfNeeded(_ pcm: OpaquePointer) throws(OutputError) {
        if snd_pcm_state(pcm) == SND_PCM_STATE_PAUSED {
            let result = snd_pcm_pause(pcm, 0)
            guard result >= 0 else { throw ALSAError.error("snd_pcm_pause() failed", result) }
        }
        guard self.mustPrepare else { return }
        let result = snd_pcm_prepare(pcm)
        guard result >= 0 else { throw ALSAError.error("snd_pcm_prepare() failed", result) }
        self.mustPrepare = false
    }

    /// Waits until the device is ready or the wait was interrupted. No allocation.
    ///
    /// - Returns: `true` when interrupted.
    private func waitForDevice(_ pcm: OpaquePointer) -> Bool {
        guard let descriptors = self.descriptors else { return false }
        let filled = snd_pcm_poll_descriptors(pcm, descriptors, UInt32(self.descriptorCapacity - 1))
        return self.wakeup.wait(descriptors, count: Int(max(0, filled)), timeoutMilliseconds: self.waitMilliseconds)
    }
}
