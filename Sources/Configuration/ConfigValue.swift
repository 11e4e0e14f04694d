// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Posix

/// Parsers for the values of top-level options, with `mpd` 0.23's rules and error texts.
///
/// Each takes the ``ConfigParameter`` it reads so a bad value becomes a ``ConfigError`` at the parameter's file
/// and line. Pure functions apart from home-directory look-ups; safe from any thread.
enum ConfigValue {
    // MARK: - Booleans and numbers

    /// `yes`/`true`/`1` or `no`/`false`/`0`, ASCII case-insensitive, nothing else (not even white space).
    static func bool(_ parameter: ConfigParameter) throws(ConfigError) -> Bool {
        switch parameter.value.lowercased() {
        case "yes", "true", "1": return true
        case "no", "false", "0": return false
        default: throw Self.error(parameter, "Not a valid boolean (\"yes\" or \"no\"): \"\(parameter.value)\"")
        }
    }

    /// A decimal integer greater than zero, read like C `strtol`: leading white space and a sign allowed,
    /// nothing after the digits.
    ///
    /// - Parameter maximum: The largest value accepted.
    static func positive(_ parameter: ConfigParameter, maximum: Int = .max) throws(ConfigError) -> Int {
        let number = try Self.integer(parameter)
        guard number > 0 else { throw Self.error(parameter, "Value must be positive") }
        guard number <= maximum else { throw Self.error(parameter, "Value too large") }
        return number
    }

    /// A decimal integer that is zero or more, read like ``positive(_:maximum:)``.
    static func unsigned(_ parameter: ConfigParameter) throws(ConfigError) -> Int {
        let number = try Self.integer(parameter)
        guard number >= 0 else { throw Self.error(parameter, "Value must not be negative") }
        return number
    }

    /// A ReplayGain preamp in dB: a number from −15 to 15, as `mpd`'s `strtof` reads it (the whole value).
    static func preamp(_ parameter: ConfigParameter) throws(ConfigError) -> Double {
        let text = parameter.value
        guard let value = Double(text.trimmingPrefix(while: { $0 == " " || $0 == "\t" })), !text.isEmpty, value.isFinite
        else { throw Self.error(parameter, "Not a numeric value") }
        guard value >= -15 && value <= 15 else { throw Self.error(parameter, "Number must be between -15 and 15") }
        return value
    }

    /// A positive number of KiB, converted to bytes.
    static func kibibytes(_ parameter: ConfigParameter) throws(ConfigError) -> Int {
        let (bytes, overflow) = try Self.positive(parameter).multipliedReportingOverflow(by: 1024)
        guard !overflow else { throw Self.error(parameter, "Value too large") }
        return bytes
    }

    private static func integer(_ parameter: ConfigParameter) throws(ConfigError) -> Int {
        var bytes = Substring(parameter.value).utf8.drop { ConfigLineScanner.isSpace($0) }
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        guard !bytes.isEmpty, bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw Self.error(parameter, "Failed to parse number")
        }
        var magnitude = 0
        var tooLarge = false
        for digit in bytes {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
            if overflow1 || overflow2 {
                tooLarge = true
                break
            }
            magnitude = sum
        }
        // A negative number is refused for its sign before its size.
        if negative { return tooLarge ? .min : -magnitude }
        guard !tooLarge else { throw Self.error(parameter, "Value too large") }
        return magnitude
    }

    // MARK: - Paths

    /// An absolute path, with a leading `~` or `~/` replaced by `home` and `~user/` by that user's home.
    ///
    /// - Parameters:
    ///   - home: The home directory for `~`, normally `$HOME`.
    static func path(_ parameter: ConfigParameter, home: String) throws(ConfigError) -> String {
        let value = parameter.value
        var expanded = value
        if value.hasPrefix("~") {
            let afterTilde = value.dropFirst()
            let user = afterTilde.prefix { $0 != "/" }
            let rest = afterTilde.dropFirst(user.count)
            if user.isEmpty {
                expanded = home + rest
            } else if let userHome = UserDatabase.homeDirectory(ofUser: String(user)) {
                expanded = userHome + rest
            } else {
                throw Self.error(parameter, "no such user: \(user)")
            }
        }
        guard expanded.hasPrefix("/") else { throw Self.error(parameter, "not an absolute path: \(value)") }
        return expanded
    }

    // MARK: - Permissions

    /// The permission names `mpd` 0.23 accepts, case-sensitively.
    static let permissionNames: Set<String> = ["read", "add", "player", "control", "admin"]

    /// Checks a comma-separated permission list; empty items are skipped, white space is not trimmed.
    static func checkPermissions(_ list: Substring, in parameter: ConfigParameter) throws(ConfigError) {
        for item in list.split(separator: ",") where !Self.permissionNames.contains(String(item)) {
            throw Self.error(parameter, "unknown permission \"\(item)\"")
        }
    }

    /// Checks a `password` value: `secret@permissions`, split at the first `@`.
    static func checkPassword(_ parameter: ConfigParameter) throws(ConfigError) {
        guard let at = parameter.value.firstIndex(of: "@") else {
            throw Self.error(parameter, "\"@\" not found in password string")
        }
        try Self.checkPermissions(parameter.value[parameter.value.index(after: at)...], in: parameter)
    }

    /// Checks a `host_permissions` value: `host permissions`, split at the first space; the host must not be empty.
    static func checkHostPermissions(_ parameter: ConfigParameter) throws(ConfigError) {
        let value = parameter.value
        let space = value.firstIndex(of: " ") ?? value.endIndex
        guard space > value.startIndex else { throw Self.error(parameter, "Failed to extract host name") }
        guard space < value.endIndex else { return }
        try Self.checkPermissions(value[value.index(after: space)...], in: parameter)
    }

    // MARK: - Errors

    /// An error at `parameter`'s file and line.
    static func error(_ parameter: ConfigParameter, _ message: String) -> ConfigError {
        ConfigError(file: parameter.file, line: parameter.line, message: message)
    }
}
