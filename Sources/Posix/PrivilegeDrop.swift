// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// Switching the whole process to the configured `user` (and `group`), as `mpd` does after binding its sockets.
///
/// The steps are `mpd`'s, in its order: the group, then the user's supplementary groups, then the user; each is
/// skipped when the process already has that id, so naming yourself works without privileges. glibc applies
/// `setgid`, `setgroups`/`initgroups` and `setuid` to every thread of the process, not only the caller. A value
/// type; ``apply()`` changes the process and is meant for the main thread at start-up.
public struct PrivilegeDrop: Sendable, Hashable {
    /// One change of credentials.
    public enum Step: Sendable, Hashable {
        /// `setgid`: the real, effective and saved group id.
        case setGroup(gid_t)
        /// `initgroups`: the supplementary groups of the user (from the group database), plus the group.
        case initializeGroups(user: String, group: gid_t)
        /// `setgroups`: exactly this one supplementary group (when `group` is configured).
        case setSupplementaryGroup(gid_t)
        /// `setuid`: the real, effective and saved user id.
        case setUser(uid_t)
    }

    /// The user to run as.
    public var account: UserAccount
    /// The group to run as: the `group` option's, or the user's primary group.
    public var gid: gid_t
    /// Whether `group` was configured: then the supplementary groups are that group alone instead of the user's.
    public var groupConfigured: Bool

    /// The switch to `account`, in `group` when one is configured (its id), else in the user's primary group.
    public init(account: UserAccount, group: gid_t? = nil) {
        self.account = account
        self.gid = group ?? account.gid
        self.groupConfigured = group != nil
    }

    /// The steps that take a process running as `uid` and `gid` to the configured credentials, in order.
    ///
    /// As in `mpd`: nothing changes that already has the wanted id, and the supplementary groups are only set when
    /// the user changes. Unlike `mpd`, a configured `group` also replaces the supplementary groups (`mpd` keeps
    /// root's).
    public func steps(currentUID uid: uid_t, currentGID gid: gid_t) -> [Step] {
        var steps: [Step] = []
        if self.gid != gid { steps.append(.setGroup(self.gid)) }
        if self.account.uid != uid {
            steps.append(
                self.groupConfigured
                    ? .setSupplementaryGroup(self.gid) : .initializeGroups(user: self.account.name, group: self.gid))
            steps.append(.setUser(self.account.uid))
        }
        return steps
    }

    /// Applies ``steps(currentUID:currentGID:)`` to the process, then checks that root was left when another user
    /// was asked for.
    ///
    /// - Throws: `mpd`'s message for the step that failed, e.g. `Failed to set group 1: Operation not permitted`.
    public func apply() throws(PrivilegeDropError) {
        for step in self.steps(currentUID: getuid(), currentGID: getgid()) {
            switch step {
            case .setGroup(let gid):
                guard setgid(gid) == 0 else {
                    throw PrivilegeDropError(message: "Failed to set group \(gid): \(Errno.current)")
                }
            case .initializeGroups(let user, let gid):
                guard initgroups(user, gid) == 0 else {
                    throw PrivilegeDropError(
                        message: "Failed to set supplementary groups of user \"\(user)\": \(Errno.current)")
                }
            case .setSupplementaryGroup(let gid):
                var groups = [gid]
                guard setgroups(1, &groups) == 0 else {
                    throw PrivilegeDropError(
                        message: "Failed to set supplementary groups of user \"\(self.account.name)\": \(Errno.current)"
                    )
                }
            case .setUser(let uid):
                guard setuid(uid) == 0 else {
                    throw PrivilegeDropError(message: "Failed to set user \"\(self.account.name)\": \(Errno.current)")
                }
            }
        }
        guard getuid() == self.account.uid, geteuid() == self.account.uid, getgid() == self.gid,
            getegid() == self.gid
        else {
            throw PrivilegeDropError(message: "Failed to set user \"\(self.account.name)\": credentials did not change")
        }
        if self.account.uid != 0 && setuid(0) == 0 {
            throw PrivilegeDropError(message: "Failed to set user \"\(self.account.name)\": root can be regained")
        }
    }
}

/// Why the process could not switch to the configured user: `mpd`'s message.
public struct PrivilegeDropError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The message, without a prefix.
    public var message: String

    public var description: String { self.message }
}
