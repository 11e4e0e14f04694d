// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model

/// Look-ups in the user database (`/etc/passwd`, or whatever NSS is configured to use).
public enum UserDatabase {
    /// The home directory of the user named `name`, or `nil` when there is no such user.
    ///
    /// The corresponding C function is `getpwnam_r`.
    public static func homeDirectory(ofUser name: String) -> String? {
        Self.homeDirectory { entry, buffer, result in
            getpwnam_r(name, entry, buffer.baseAddress!, buffer.count, result)
        }
    }

    /// The home directory of the user the process runs as, or `nil` when the database has no entry for it.
    ///
    /// The corresponding C functions are `getuid` and `getpwuid_r`.
    public static func homeDirectoryOfCurrentUser() -> String? {
        let uid = getuid()
        return Self.homeDirectory { entry, buffer, result in
            getpwuid_r(uid, entry, buffer.baseAddress!, buffer.count, result)
        }
    }

    /// Runs a `getpw*_r` call with a buffer that grows while the call reports `ERANGE`.
    private static func homeDirectory(
        _ lookUp: (
            UnsafeMutablePointer<passwd>, UnsafeMutableBufferPointer<CChar>,
            UnsafeMutablePointer<UnsafeMutablePointer<passwd>?>
        ) -> Int32
    ) -> String? {
        var size = 1024
        while true {
            var buffer = [CChar](repeating: 0, count: size)
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>? = nil
            var tooSmall = false
            let home = buffer.withUnsafeMutableBufferPointer { buffer -> String? in
                let status = lookUp(&entry, buffer, &found)
                tooSmall = status == ERANGE
                // The entry's strings live in `buffer`: copy the directory out while it exists.
                guard status == 0, found != nil, let directory = entry.pw_dir else { return nil }
                return RawText.decode(UnsafeRawBufferPointer(start: directory, count: strlen(directory)))
            }
            guard tooSmall, size < 1 << 20 else { return home }
            size *= 4
        }
    }
}
