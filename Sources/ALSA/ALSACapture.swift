// SPDX-License-Identifier: GPL-3.0-or-later

import CALSA
import Glibc
import Input
import Model
import Posix

/// An ALSA PCM opened for capture, and the loop of the thread that reads it into an ``ALSAInputStream``'s buffer.
///
/// Opened non-blocking (a busy device fails at once instead of waiting), set up as `mpd`'s alsa input does:
/// interleaved frames in the URL's format, exactly its rate and channels (unless alsa-lib converts, see
/// ``ALSAInputSettings``), four periods per buffer. The buffer is the largest the device offers, up to one
/// second (`mpd` takes the largest, which alsa-lib's software plugins make hundreds of megabytes).
///
/// Created on the thread that opens the stream, then used only by its capture thread (``run(into:)``) until that
/// thread has been joined; closed when released. `@unchecked Sendable` for that hand-over.
final class ALSACapture: @unchecked Sendable {
    /// The device's name.
    let device: String
    /// Bytes per frame.
    let frameSize: Int
    private let pcm: OpaquePointer
    /// The device's poll descriptors, and one more for the buffer's wake-up eventfd.
    private let descriptors: UnsafeMutablePointer<pollfd>
    private let descriptorCount: Int
    /// Where `snd_pcm_readi` writes before the frames go into the ring buffer.
    private let block: UnsafeMutableRawPointer
    private let blockFrames: Int
    /// How long one wait for the device lasts at most before reading is tried again (milliseconds).
    private let waitMilliseconds: Int32

    /// The longest buffer asked of the device, in seconds of audio.
    static let maximumBufferSeconds = 1

    /// Opens `device` and sets it up for `format`.
    ///
    /// - Parameters:
    ///   - mode: `snd_pcm_open` flags besides `SND_PCM_NONBLOCK` (``ALSAInputSettings``' `auto_*`).
    ///   - localConfiguration: A configuration used instead of the system's (tests).
    /// - Throws: `mpd`'s words: `Failed to open device NAME: REASON`, `Cannot set sample format: REASON`…
    init(
        device: String, format: AudioFormat, mode: Int32, localConfiguration: ALSALocalConfiguration?
    ) throws(ALSACaptureError) {
        var handle: OpaquePointer?
        let flags = SND_PCM_NONBLOCK | mode
        let opened =
            if let local = localConfiguration {
                snd_pcm_open_lconf(&handle, device, SND_PCM_STREAM_CAPTURE, flags, local.tree)
            } else {
                snd_pcm_open(&handle, device, SND_PCM_STREAM_CAPTURE, flags)
            }
        guard opened >= 0, let handle else { throw .init("Failed to open device \(device)", opened) }
        let periodFrames: Int
        do throws(ALSACaptureError) {
            periodFrames = try Self.configure(handle, format)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        snd_pcm_prepare(handle)
        self.device = device
        self.pcm = handle
        self.frameSize = format.frameSize
        let count = Int(max(0, snd_pcm_poll_descriptors_count(handle)))
        self.descriptors = .allocate(capacity: count + 1)
        self.descriptorCount = Int(max(0, snd_pcm_poll_descriptors(handle, self.descriptors, UInt32(count))))
        self.blockFrames = max(1, min(periodFrames, 16384))
        self.block = .allocate(byteCount: self.blockFrames * self.frameSize, alignment: 16)
        let periodMilliseconds = periodFrames * 1000 / max(1, format.sampleRate)
        self.waitMilliseconds = Int32(clamping: min(1000, max(10, 2 * periodMilliseconds)))
    }

    deinit {
        snd_pcm_close(self.pcm)
        self.descriptors.deallocate()
        self.block.deallocate()
    }

    /// Sets the hardware and software parameters; returns the period size in frames.
    private static func configure(_ pcm: OpaquePointer, _ format: AudioFormat) throws(ALSACaptureError) -> Int {
        var allocated: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&allocated) >= 0, let hw = allocated else {
            throw ALSACaptureError(message: "snd_pcm_hw_params_malloc() failed")
        }
        defer { snd_pcm_hw_params_free(hw) }
        try ALSACaptureError.check(snd_pcm_hw_params_any(pcm, hw), "snd_pcm_hw_params_any() failed")
        try ALSACaptureError.check(
            snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED),
            "snd_pcm_hw_params_set_access() failed")
        guard let sampleFormat = PCMWireFormat(sampleFormat: format.sampleFormat).alsaFormat else {
            throw .init("Cannot set sample format", -PCMWireFormat.invalidArgument)
        }
        try ALSACaptureError.check(
            snd_pcm_hw_params_set_format(pcm, hw, sampleFormat), "Cannot set sample format")
        try ALSACaptureError.check(
            snd_pcm_hw_params_set_channels(pcm, hw, UInt32(clamping: format.channels)), "Cannot set channels")
        try ALSACaptureError.check(
            snd_pcm_hw_params_set_rate(pcm, hw, UInt32(clamping: format.sampleRate), 0), "Cannot set sample rate")
        var largest: snd_pcm_uframes_t = 0
        if snd_pcm_hw_params_get_buffer_size_max(hw, &largest) >= 0 {
            let limit = snd_pcm_uframes_t(format.sampleRate * Self.maximumBufferSeconds)
            var size = min(largest, limit)
            _ = snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &size)
        }
        // Four periods per buffer: woken often enough not to overrun, not more often.
        var buffer: snd_pcm_uframes_t = 0
        if snd_pcm_hw_params_get_buffer_size(hw, &buffer) == 0 {
            var period = buffer / 4
            var direction: Int32 = -1
            try ALSACaptureError.check(
                snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &direction), "Cannot set period size")
        }
        try ALSACaptureError.check(snd_pcm_hw_params(pcm, hw), "snd_pcm_hw_params() failed")
        var period: snd_pcm_uframes_t = 0
        var direction: Int32 = 0
        try ALSACaptureError.check(
            snd_pcm_hw_params_get_period_size(hw, &period, &direction),
            "snd_pcm_hw_params_get_period_size() failed")

        var allocatedSoftware: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&allocatedSoftware) >= 0, let sw = allocatedSoftware else {
            throw ALSACaptureError(message: "snd_pcm_sw_params_malloc() failed")
        }
        defer { snd_pcm_sw_params_free(sw) }
        snd_pcm_sw_params_current(pcm, sw)
        try ALSACaptureError.check(snd_pcm_sw_params(pcm, sw), "snd_pcm_sw_params() failed")
        return Int(period)
    }

    // MARK: - The capture thread

    /// Reads frames into `buffer` until it is cancelled or the device fails: while the buffer is full, reading
    /// stops (the device overruns) until the reader has taken half of it, as `mpd` does; overruns and suspends
    /// are recovered. A failure ends the stream with `PCM error - stream aborted` after the buffered frames.
    ///
    /// Capture thread; never allocates, locks only the buffer's mutex, logs nothing.
    func run(into buffer: AsyncStreamBuffer<Never>, uri: String) {
        snd_pcm_start(self.pcm)
        while true {
            buffer.condition.lock()
            if buffer.cancelled {
                buffer.condition.unlock()
                return
            }
            if buffer.space < self.frameSize {
                buffer.paused = true
                while !buffer.resumeRequested && !buffer.cancelled { buffer.condition.wait() }
                buffer.paused = false
                buffer.resumeRequested = false
                buffer.condition.unlock()
                continue
            }
            let frames = min(self.blockFrames, buffer.space / self.frameSize)
            buffer.condition.unlock()

            let result = snd_pcm_readi(self.pcm, self.block, snd_pcm_uframes_t(frames))
            if result == 0 || result == -Int(EAGAIN) {
                self.waitForDevice(buffer.wake)
                continue
            }
            if result < 0 {
                if self.recover(Int32(truncatingIfNeeded: result)) >= 0 { continue }
                buffer.condition.lock()
                buffer.failure = .plugin(message: "PCM error - stream aborted", uri: uri)
                buffer.ended = true
                buffer.condition.broadcast()
                buffer.condition.unlock()
                return
            }
            buffer.condition.lock()
            if !buffer.cancelled {
                buffer.append(UnsafeRawBufferPointer(start: self.block, count: result * self.frameSize))
                buffer.condition.broadcast()
            }
            buffer.condition.unlock()
        }
    }

    /// Waits until the device has frames, `wake` is signalled (a resume, a cancel) or the wait's limit passes.
    private func waitForDevice(_ wake: FileDescriptor) {
        let count = self.descriptorCount
        self.descriptors[count] = pollfd(fd: wake.rawValue, events: Int16(POLLIN), revents: 0)
        // EINTR or another poll failure only ends this wait early; the next read tells what is going on.
        _ = poll(self.descriptors, nfds_t(count + 1), self.waitMilliseconds)
        if self.descriptors[count].revents & Int16(POLLIN) != 0 { EventFD.drain(wake) }
        var events: UInt16 = 0
        _ = snd_pcm_poll_descriptors_revents(self.pcm, self.descriptors, UInt32(count), &events)
    }

    /// Brings the device back to capturing after `error` (an overrun's `-EPIPE`, a suspend's `-ESTRPIPE`),
    /// according to its state; returns 0 or a negative error when it cannot be recovered (disconnected).
    private func recover(_ error: Int32) -> Int32 {
        let state = snd_pcm_state(self.pcm)
        switch state {
        case SND_PCM_STATE_PAUSED:
            return snd_pcm_pause(self.pcm, 0)
        case SND_PCM_STATE_SUSPENDED:
            let resumed = snd_pcm_resume(self.pcm)
            if resumed == -EAGAIN || resumed == 0 { return 0 }
            return self.restart()
        case SND_PCM_STATE_OPEN, SND_PCM_STATE_SETUP, SND_PCM_STATE_XRUN:
            return self.restart()
        case SND_PCM_STATE_PREPARED, SND_PCM_STATE_RUNNING, SND_PCM_STATE_DRAINING:
            return 0
        default:
            return error
        }
    }

    /// Prepares and starts the device again.
    private func restart() -> Int32 {
        let prepared = snd_pcm_prepare(self.pcm)
        return prepared < 0 ? prepared : snd_pcm_start(self.pcm)
    }
}

/// Why a capture device could not be opened or set up: `what: snd_strerror` as `mpd` words it.
struct ALSACaptureError: Error, Equatable {
    var message: String

    init(message: String) { self.message = message }

    /// `what: reason`.
    init(_ what: String, _ code: some BinaryInteger) { self.message = "\(what): \(ALSAError.text(code))" }

    /// Throws when `result` is negative.
    static func check(_ result: Int32, _ what: @autoclosure () -> String) throws(ALSACaptureError) {
        guard result >= 0 else { throw ALSACaptureError(what(), result) }
    }
}
