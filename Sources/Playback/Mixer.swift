// SPDX-License-Identifier: GPL-3.0-or-later

/// `mixer_type`.
public enum MixerType: String, Sendable, Equatable {
    /// The output's own (ALSA simple mixer element).
    case hardware
    /// Volume applied to the samples in the output thread.
    case software
    /// No volume control.
    case none
}

/// A volume control.
///
/// Called on the event loop thread (`setvol`, `status`), and opened/closed there too, only through the player's
/// ``MixerControl``, which keeps `mpd`'s lifecycle: `volume` and `setVolume` are called only while open. Hardware
/// mixers report changes made by other programs through the `onChange` callback their plugin received.
public protocol Mixer: AnyObject, Sendable {
    /// Opens the control. Not called again while open.
    func open() throws(OutputError)
    /// Closes the control.
    func close()
    /// The volume 0...100.
    func volume() throws(OutputError) -> Int
    /// Sets the volume 0...100.
    func setVolume(_ volume: Int) throws(OutputError)
    /// Whether `setvol` may use the mixer now: `false` for a mixer of an output `mpd` has not really enabled yet
    /// (its non-global mixers, such as pulse's, wait for the output's first use), which counts as a disabled
    /// output's. Event loop thread.
    var acceptsVolume: Bool { get }
    /// Whether the mixer is `mpd`'s "global" kind (alsa, oss, pipewire, software): opened on demand by a read or a
    /// set, and left open when its output closes. Otherwise (pulse, sndio) it is opened when its output opens and
    /// closed when the output closes, pauses without a pause mode, or stops.
    var isGlobal: Bool { get }
}

extension Mixer {
    public var acceptsVolume: Bool { true }
    public var isGlobal: Bool { true }
}

/// An output's mixer with `mpd`'s lifecycle (its mixer control): whether it is open, and why it last failed.
///
/// A global mixer (``Mixer/isGlobal``) is opened by the first read or set, unless an earlier attempt failed; its
/// output opening opens it too (even after a failure); it stays open until its output is disabled or the server
/// stops. Any mixer is opened when its output opens; a mixer that is not global is closed when its output closes
/// (``autoClose()``). A failed read closes the mixer and keeps the failure, so later reads say nothing (-1) and
/// later sets fail with it, until the output opens again or is disabled.
///
/// Loop-confined: the player calls it on the event loop thread only.
final class MixerControl {
    /// The plugin's mixer.
    let mixer: any Mixer
    /// Whether ``mixer`` is open.
    private(set) var isOpen = false
    /// Why the last open or read failed, until an open succeeds or the mixer is closed.
    private var failure: OutputError?

    init(_ mixer: any Mixer) { self.mixer = mixer }

    /// A software mixer: followed even while its output is disabled.
    var isSoftware: Bool { self.mixer is SoftwareMixer }

    /// Opens the mixer unless it is open (whatever failed before); a failure is kept.
    func open() throws(OutputError) {
        guard !self.isOpen else { return }
        do throws(OutputError) {
            try self.mixer.open()
        } catch {
            self.failure = error
            throw error
        }
        self.isOpen = true
        self.failure = nil
    }

    /// Closes the mixer if it is open (forgetting its failure then).
    func close() {
        guard self.isOpen else { return }
        self.mixer.close()
        self.isOpen = false
        self.failure = nil
    }

    /// Closes the mixer unless it is global: its output closes.
    func autoClose() {
        if !self.mixer.isGlobal { self.close() }
    }

    /// The volume 0...100, -1 for none (a mixer that is not open). A global mixer that did not fail is opened first
    /// (its failure is thrown); a failed read closes the mixer and keeps the failure.
    func volume() throws(OutputError) -> Int {
        if self.mixer.isGlobal, self.failure == nil { try self.open() }
        guard self.isOpen else { return -1 }
        do throws(OutputError) {
            return try self.mixer.volume()
        } catch {
            self.close()
            self.failure = error
            throw error
        }
    }

    /// Sets the volume 0...100: a global mixer that did not fail is opened first; a mixer that is not open takes
    /// nothing, or throws the failure it keeps.
    func setVolume(_ volume: Int) throws(OutputError) {
        if self.mixer.isGlobal, self.failure == nil { try self.open() }
        if self.isOpen {
            try self.mixer.setVolume(volume)
        } else if let failure = self.failure {
            throw failure
        }
    }
}

/// What setting the volume on every output's mixer came to, as `mpd` ranks it (`SetVolumeResult`): each output
/// gives no mixer, disabled (a mixer other than a software one on a disabled output), a failure or success, and the
/// highest rank of all wins. A failure takes the rank of failures when it is the first (even over an earlier
/// success, as in `mpd`); later ones are only logged.
public enum VolumeChange: Sendable, Equatable {
    /// Some mixer took the volume.
    case changed
    /// No output has a mixer (`mpd`: `No mixer`).
    case noMixer
    /// Every mixer but software ones is on a disabled output (`mpd`: `All outputs are disabled`).
    case allDisabled
    /// The first mixer that failed, in `mpd`'s words: `Failed to set mixer for 'NAME'; REASON`.
    case failed(String)

    /// The protocol's error for this outcome (`setvol`, `volume`); `nil` when the volume changed.
    public var message: String? {
        switch self {
        case .changed: nil
        case .noMixer: "No mixer"
        case .allDisabled: "All outputs are disabled"
        case .failed(let message): message
        }
    }
}
