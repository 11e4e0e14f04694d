// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import RawText

/// An entry of the user database: what `getpwnam` gives for a user name.
public struct UserAccount: Sendable, Hashable {
    /// The login name.
    public var name: String
    /// The user id.
    public var uid: uid_t
    /// The primary group id.
    public var gid: gid_t
    /// The home directory.
    public var home: String

    /// Creates an entry (for tests; real ones come from ``UserDatabase/account(named:)``).
    public init(name: String, uid: uid_t, gid: gid_t, home: String) {
        self.name = name
        self.uid = uid
        self.gid = gid
        self.home = home
    }
}

/// Look-ups in the user and group databases (`/etc/passwd` and `/etc/group`, or whatever NSS is configured to use).
public enum UserDatabase {
    /// The home directory of the user named `name`, or `nil` when there is no such user.
    ///
    /// The corresponding C function is `getpwnam_r`.
    public static func homeDirectory(ofUser name: String) -> String? {
        Self.account(named: name)?.home
    }

    /// The home directory of the user the process runs as, or `nil` when the database has no entry for it.
    ///
    /// The corresponding C functions are `getuid` and `getpwuid_r`.
    public static func homeDirectoryOfCurrentUser() -> String? {
        let uid = getuid()
        return Self.lookUp { entry, buffer, result in
            getpwuid_r(uid, entry, buffer.baseAddress!, buffer.count, result)
        }?.home
    }

    /// The entry of the user named `name`, or `nil` when there is no such user.
    ///
    /// The corresponding C function is `getpwnam_r`.
    public static func account(named name: String) -> UserAccount? {
        Self.lookUp { entry, buffer, result in
            getpwnam_r(name, entry, buffer.baseAddress!, buffer.count, result)
        }
    }

    /// The id of the group named `name`, or `nil` when there is no such group.
    ///
    /// The corresponding C function is `getgrnam_r`.
    public static func groupID(named name: String) -> gid_t? {
        Self.withGrowingBuffer { buffer in
            var entry = group()
            var found: UnsafeMutablePointer<group>? = nil
            let status = getgrnam_r(name, &entry, buffer.baseAddress!, buffer.count, &found)
            return (status, status == 0 && found != nil ? entry.gr_gid : nil)
        }
    }

    /// Runs a `getpw*_r` call with a buffer that grows while the call reports `ERANGE`.
    private static func lookUp(
        _ call: (
            UnsafeMutablePointer<passwd>, UnsafeMutableBufferPointer<CChar>,
            UnsafeMutablePointer<UnsafeMutablePointer<passwd>?>
        ) -> Int32
    ) -> UserAccount? {
        Self.withGrowingBuffer { buffer in
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>? = nil
            let status = call(&entry, buffer, &found)
            // The entry's strings live in `buffer`: copy them out while it exists.
            guard status == 0, found != nil, let name = entry.pw_name, let directory = entry.pw_dir else {
                return (status, nil)
            }
            let account = UserAccount(
                name: RawText.decode(UnsafeRawBufferPointer(start: name, count: strlen(name))), uid: entry.pw_uid,
                gid: entry.pw_gid,
                home: RawText.decode(UnsafeRawBufferPointer(start: directory, count: strlen(directory))))
            return (status, account)
        }
    }

    /// Runs a `get*_r` call, which returns its status and its result, with a buffer that grows while the status is
    /// `ERANGE`.
    private static func withGrowingBuffer<Result>(
        _ call: (UnsafeMutableBufferPointer<CChar>) -> (status: Int32, result: Result?)
    ) -> Result? {
        var size = 1024
        while true {
            var buffer = [CChar](repeating: 0, count: size)
            let (status, result) = buffer.withUnsafeMutableBufferPointer { call($0) }
            guard status == ERANGE, size < 1 << 20 else { return result }
            size *= 4
        }
    }
}
