// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// The process's environment variables.
public enum ProcessEnvironment {
    /// Every `NAME=value` entry of the environment, split at the first `=`; for a name given twice the last
    /// entry wins. Any thread, as long as nothing changes the environment meanwhile.
    ///
    /// The corresponding C variable is `environ`.
    public static func variables() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return variables
    }
}
