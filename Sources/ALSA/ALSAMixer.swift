// SPDX-License-Identifier: GPL-3.0-or-later

import CALSA
import Glibc
import Model
import Playback
import Posix
import Synchronization

/// The ALSA hardware mixer: a simple mixer element (`mixer_control`, `mixer_index`) on `mixer_device`, with
/// `mpd`'s volume curve (``VolumeMapping``) and rounding memo (``VolumeMemo``).
///
/// `open`, `close`, `volume` and `setVolume` are called on the event loop thread. While open, a monitor thread
/// waits on the mixer's descriptors and calls `onChange` (on that thread) when the control changes, including
/// changes made by other programs.
///
/// `@unchecked Sendable`: the mixer handle lives in `shared`, behind a mutex; `monitor` is touched only by
/// `open`/`close` on the event loop thread.
public final class ALSAMixer: Mixer, @unchecked Sendable {
    /// `mixer_device` when the block has none (`mpd` uses this whatever the output's `device` is).
    public static let defaultDevice = "default"
    /// `mixer_control` when the block has none.
    public static let defaultControl = "PCM"

    /// The control device name.
    public let device: String
    /// The simple element's name, matched ignoring ASCII case.
    public let control: String
    /// The simple element's index.
    public let index: UInt32

    private let shared: MixerShared
    private var monitor: NamedThread?

    /// Creates a closed mixer. Any thread.
    ///
    /// - Parameter onChange: called on the monitor thread after each change of the control's value.
    public init(
        device: String = ALSAMixer.defaultDevice, control: String = ALSAMixer.defaultControl, index: UInt32 = 0,
        logger: Logger, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) {
        self.device = device
        self.control = control
        self.index = index
        self.shared = MixerShared(logger: logger, onChange: onChange, stop: try InterruptibleWait())
    }

    deinit { self.close() }

    /// Attaches to the device, finds the element and starts watching it. Event loop thread.
    ///
    /// - Throws: `failed to attach to default: No such file or directory`, `no such mixer control: PCM`, …
    public func open() throws(OutputError) {
        self.close()
        let session: MixerSession
        do throws(OutputError) {
            session = try MixerSession(device: self.device, control: self.control, index: self.index)
        } catch {
            // As mpd's mixer keeps its failure: setting the volume then fails with the reason the open failed.
            self.shared.failure.withLock { $0 = error }
            throw error
        }
        self.shared.failure.withLock { $0 = nil }
        let descriptors = session.pollDescriptorCount
        self.shared.session.withLock { $0 = session }
        let body = MonitorBody(shared: self.shared, descriptorCount: descriptors)
        self.monitor = NamedThread("mixer") { body.run() }
    }

    /// Stops watching and closes the handle. Event loop thread.
    public func close() {
        if let monitor = self.monitor {
            self.shared.stop.interrupt()
            monitor.join()
            _ = self.shared.stop.consume()
            self.monitor = nil
        }
        self.shared.session.withLock { $0 = nil }
    }

    /// The volume 0…100 of the element's front left channel (or the value last set, while the control still reads
    /// what that left it at). Event loop thread.
    public func volume() throws(OutputError) -> Int {
        try self.shared.withSession { session throws(OutputError) in
            let result = snd_mixer_handle_events(session.handle)
            guard result >= 0 else { throw ALSAError.error("snd_mixer_handle_events() failed", result) }
            return session.memo.report(session.percent)
        }
    }

    /// Sets every channel of the element to `volume` percent (rounding up to the next step). Event loop thread.
    public func setVolume(_ volume: Int) throws(OutputError) {
        try self.shared.withSession { session throws(OutputError) in
            let result = VolumeMapping.setNormalizedVolume(0.01 * Double(volume), on: session, direction: 1)
            guard result >= 0 else { throw ALSAError.error("failed to set ALSA volume", result) }
            session.memo.didSet(desired: volume, resulting: session.percent)
        }
    }
}

/// What the mixer and its monitor thread share.
///
/// `@unchecked Sendable`: `session` is only reached through its mutex; the rest is immutable or thread-safe.
private final class MixerShared: @unchecked Sendable {
    let session = Mutex<MixerSession?>(nil)
    /// Why the last `open` failed, until one succeeds.
    let failure = Mutex<OutputError?>(nil)
    let logger: Logger
    let onChange: @Sendable () -> Void
    let stop: InterruptibleWait

    init(logger: Logger, onChange: @escaping @Sendable () -> Void, stop: InterruptibleWait) {
        self.logger = logger
        self.onChange = onChange
        self.stop = stop
    }

    func withSession<T>(_ body: (MixerSession) throws(OutputError) -> T) throws(OutputError) -> T {
        let result: Result<T, OutputError> = self.session.withLock { session in
            guard let session else {
                return .failure(self.failure.withLock { $0 } ?? OutputError("mixer is not open"))
            }
            do throws(OutputError) { return .success(try body(session)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

/// An open `snd_mixer_t` and its element.
///
/// `@unchecked Sendable`: reached only under ``MixerShared/session``'s lock (also held while alsa-lib runs the
/// element callback).
private final class MixerSession: VolumeControl, @unchecked Sendable {
    let handle: OpaquePointer
    let element: OpaquePointer
    var memo = VolumeMemo()
    /// Set by the element callback, cleared by the monitor thread.
    var changed = false

    init(device: String, control: String, index: UInt32) throws(OutputError) {
        var opened: OpaquePointer?
        let result = snd_mixer_open(&opened, 0)
        guard result >= 0, let handle = opened else { throw ALSAError.error("snd_mixer_open() failed", result) }
        let element: OpaquePointer
        do throws(OutputError) {
            try ALSAError.check(snd_mixer_attach(handle, device), "failed to attach to \(device)")
            try ALSAError.check(snd_mixer_selem_register(handle, nil, nil), "snd_mixer_selem_register() failed")
            try ALSAError.check(snd_mixer_load(handle), "snd_mixer_load() failed")
            guard let found = Self.findElement(handle, control: control, index: index) else {
                throw OutputError("no such mixer control: \(control)")
            }
            element = found
        } catch {
            snd_mixer_close(handle)
            throw error
        }
        self.handle = handle
        self.element = element
        snd_mixer_elem_set_callback_private(element, Unmanaged.passUnretained(self).toOpaque())
        snd_mixer_elem_set_callback(element, mixerElementCallback)
    }

    deinit {
        snd_mixer_elem_set_callback(self.element, nil)
        snd_mixer_close(self.handle)
    }

    var pollDescriptorCount: Int { Int(max(0, snd_mixer_poll_descriptors_count(self.handle))) }

    /// The front left channel's level in percent.
    var percent: Int { VolumeMapping.percent(VolumeMapping.normalizedVolume(of: self)) }

    private static func findElement(_ handle: OpaquePointer, control: String, index: UInt32) -> OpaquePointer? {
        var element = snd_mixer_first_elem(handle)
        while let current = element {
            if snd_mixer_elem_get_type(current) == SND_MIXER_ELEM_SIMPLE,
                let name = snd_mixer_selem_get_name(current),
                String(cString: name).lowercased() == control.lowercased(),
                snd_mixer_selem_get_index(current) == index
            {
                return current
            }
            element = snd_mixer_elem_next(current)
        }
        return nil
    }

    // MARK: VolumeControl

    func dBRange() -> (min: Int, max: Int)? {
        var min = 0
        var max = 0
        return snd_mixer_selem_get_playback_dB_range(self.element, &min, &max) < 0 ? nil : (min, max)
    }

    func rawRange() -> (min: Int, max: Int)? {
        var min = 0
        var max = 0
        return snd_mixer_selem_get_playback_volume_range(self.element, &min, &max) < 0 ? nil : (min, max)
    }

    func dB() -> Int? {
        var value = 0
        return snd_mixer_selem_get_playback_dB(self.element, SND_MIXER_SCHN_FRONT_LEFT, &value) < 0 ? nil : value
    }

    func raw() -> Int? {
        var value = 0
        return snd_mixer_selem_get_playback_volume(self.element, SND_MIXER_SCHN_FRONT_LEFT, &value) < 0 ? nil : value
    }

    func setDB(_ value: Int, direction: Int) -> Int32 {
        snd_mixer_selem_set_playback_dB_all(self.element, value, Int32(direction))
    }

    func setRaw(_ value: Int) -> Int32 { snd_mixer_selem_set_playback_volume_all(self.element, value) }
}

/// alsa-lib calls this inside `snd_mixer_handle_events`, which runs only under the session lock.
private func mixerElementCallback(_ element: OpaquePointer?, _ mask: UInt32) -> Int32 {
    guard let element, let context = snd_mixer_elem_get_callback_private(element) else { return 0 }
    // Unmanaged: the session outlives its element's callback (it removes the callback before closing).
    let session = Unmanaged<MixerSession>.fromOpaque(context).takeUnretainedValue()
    if mask & UInt32(SND_CTL_EVENT_MASK_VALUE) != 0 && mask != SND_CTL_EVENT_MASK_REMOVE {
        _ = session.memo.observe(session.percent)
        session.changed = true
    }
    return 0
}

/// The monitor thread's loop.
///
/// `@unchecked Sendable`: handed to the new thread once and used only there.
private final class MonitorBody: @unchecked Sendable {
    let shared: MixerShared
    let descriptors: UnsafeMutablePointer<pollfd>
    let count: Int

    init(shared: MixerShared, descriptorCount: Int) {
        self.shared = shared
        self.count = descriptorCount
        self.descriptors = .allocate(capacity: descriptorCount + 1)
    }

    deinit { self.descriptors.deallocate() }

    func run() {
        while true {
            let filled = self.shared.session.withLock { session -> Int in
                guard let session else { return -1 }
                return Int(snd_mixer_poll_descriptors(session.handle, self.descriptors, UInt32(self.count)))
            }
            if filled < 0 { return }
            if self.shared.stop.wait(self.descriptors, count: filled, timeoutMilliseconds: -1) { return }
            let outcome = self.shared.session.withLock { session -> (changed: Bool, error: Int32) in
                guard let session else { return (false, 0) }
                let result = snd_mixer_handle_events(session.handle)
                defer { session.changed = false }
                return (session.changed, result < 0 ? result : 0)
            }
            if outcome.error != 0 {
                self.shared.logger.error(
                    "snd_mixer_handle_events() failed", ["error": ALSAError.text(outcome.error)])
                // Usually the device is gone (-ENODEV); stop watching rather than spin on a broken descriptor.
                // The next volume read reports the error.
                return
            }
            if outcome.changed { self.shared.onChange() }
        }
    }
}
