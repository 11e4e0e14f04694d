// SPDX-License-Identifier: GPL-3.0-or-later

import CALSA
import Model
import Playback
import Synchronization

/// Where alsa-lib's own error messages go: our log instead of standard error.
///
/// alsa-lib has one process-wide error handler. ``install(_:)`` sets it (once) and chooses the logger; any thread
/// may call it, and alsa-lib may report from any thread that calls into it.
public enum ALSALog {
    /// The logger alsa-lib's messages go to; `nil` drops them.
    fileprivate static let destination = Mutex<Logger?>(nil)
    private static let installed = Atomic<Bool>(false)

    /// Sends alsa-lib's messages to `logger` (at `info`: the caller logs its own error for what failed).
    ///
    /// Any thread. Calling it again replaces the logger.
    public static func install(_ logger: Logger) {
        Self.destination.withLock { $0 = logger }
        if !Self.installed.exchange(true, ordering: .acquiringAndReleasing) {
            _ = fermata_alsa_install_error_handler()
        }
    }
}

/// Called by the C shim's variadic handler with the formatted message (see `Sources/CALSA/shim.h`).
@_cdecl("fermata_alsa_log_message")
func fermataALSALogMessage(
    _ file: UnsafePointer<CChar>?, _ line: Int32, _ function: UnsafePointer<CChar>?, _ error: Int32,
    _ message: UnsafePointer<CChar>?
) {
    guard let logger = ALSALog.destination.withLock({ $0 }) else { return }
    let text = message.map { String(cString: $0) } ?? ""
    let place = "\(file.map { String(cString: $0) } ?? "?"):\(line):(\(function.map { String(cString: $0) } ?? "?"))"
    if error != 0 {
        logger.info("alsa-lib", ["at": place, "message": text, "error": ALSAError.text(error)])
    } else {
        logger.info("alsa-lib", ["at": place, "message": text])
    }
}

/// alsa-lib's error codes as text, and errors in `mpd`'s form.
enum ALSAError {
    /// `snd_strerror` of an error code (either sign).
    static func text(_ code: some BinaryInteger) -> String {
        let code = Int32(truncatingIfNeeded: code)
        return String(cString: snd_strerror(code < 0 ? code : -code))
    }

    /// Throws ``error(_:_:)`` when `result` is negative.
    static func check(_ result: Int32, _ what: @autoclosure () -> String) throws(OutputError) {
        guard result >= 0 else { throw Self.error(what(), result) }
    }

    /// `what: reason`, as `mpd` words ALSA errors.
    static func error(_ what: String, _ code: some BinaryInteger) -> OutputError {
        OutputError("\(what): \(Self.text(code))")
    }
}
