// SPDX-License-Identifier: GPL-3.0-or-later

/// A line `mpd` logs about a value it read and corrected or gave up on, and runs on: logged not as the file is
/// read but where `mpd` reads that value, in its domain and at its severity.
public struct ConfigReport: Hashable, Sendable {
    /// Where in the start `mpd` reads the value, and so where the line is logged.
    public enum Moment: Hashable, Sendable {
        /// As the settings are read, before anything starts (`audio_buffer_size`).
        case start
        /// Where watching the music directory would start, after the state file is read (`auto_update_depth`);
        /// only with a music directory.
        case watching
        /// As zeroconf starts (`zeroconf_enabled`).
        case zeroconf
    }

    /// How `mpd` logs it.
    public enum Severity: Hashable, Sendable {
        case warning
        case error
    }

    public var moment: Moment
    /// `mpd`'s log domain: `config`, or `exception` for an error it catches and logs.
    public var domain: String
    public var severity: Severity
    /// The line, in `mpd`'s words.
    public var text: String

    public init(moment: Moment, domain: String, severity: Severity, text: String) {
        self.moment = moment
        self.domain = domain
        self.severity = severity
        self.text = text
    }
}

extension Settings {
    /// The reports logged at `moment`, in the order they were made.
    public func reports(at moment: ConfigReport.Moment) -> [ConfigReport] {
        self.reports.filter { $0.moment == moment }
    }
}
