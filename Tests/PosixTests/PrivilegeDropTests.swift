// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Testing

@testable import Posix

struct PrivilegeDropTests {
    static let mpd = UserAccount(name: "mpd", uid: 105, gid: 29, home: "/var/lib/mpd")

    @Test func fromRootSetsGroupThenGroupsThenUser() {
        let drop = PrivilegeDrop(account: Self.mpd)
        #expect(
            drop.steps(currentUID: 0, currentGID: 0) == [
                .setGroup(29), .initializeGroups(user: "mpd", group: 29), .setUser(105),
            ])
    }

    @Test func aConfiguredGroupReplacesTheSupplementaryGroups() {
        let drop = PrivilegeDrop(account: Self.mpd, group: 63)
        #expect(drop.gid == 63)
        #expect(drop.steps(currentUID: 0, currentGID: 0) == [.setGroup(63), .setSupplementaryGroup(63), .setUser(105)])
    }

    @Test func whatAlreadyMatchesIsLeftAlone() {
        let drop = PrivilegeDrop(account: Self.mpd)
        // Already the user: nothing, so naming yourself needs no privilege (as mpd).
        #expect(drop.steps(currentUID: 105, currentGID: 29).isEmpty)
        // Already in the group: the groups and the user still change.
        #expect(
            drop.steps(currentUID: 0, currentGID: 29) == [.initializeGroups(user: "mpd", group: 29), .setUser(105)])
        // The user but another group: only the group (mpd sets no supplementary groups for the same user).
        #expect(drop.steps(currentUID: 105, currentGID: 0) == [.setGroup(29)])
    }

    @Test func applyingOurOwnCredentialsChangesNothing() throws {
        let me = UserAccount(name: "me", uid: getuid(), gid: getgid(), home: "/")
        try PrivilegeDrop(account: me).apply()
        #expect(getuid() == me.uid && getgid() == me.gid)
    }

    @Test func looksUpUsersAndGroups() throws {
        let root = try #require(UserDatabase.account(named: "root"))
        #expect(root == UserAccount(name: "root", uid: 0, gid: 0, home: "/root"))
        #expect(UserDatabase.account(named: "no_such_user_fermata") == nil)
        #expect(UserDatabase.groupID(named: "root") == 0)
        #expect(UserDatabase.groupID(named: "no_such_group_fermata") == nil)
    }
}

struct PidFileTests {
    @Test func readsTheProcessIDAsMpdKillDoes() {
        #expect(PidFile.processID(contents: Array("1234\n".utf8)) == 1234)
        #expect(PidFile.processID(contents: Array("  42".utf8)) == 42)
        #expect(PidFile.processID(contents: Array("77 trailing".utf8)) == 77)
        #expect(PidFile.contents(for: 99) == Array("99\n".utf8))
    }

    @Test func refusesWhatIsNoProcessID() {
        for text in ["", "\n", "garbage", "0\n", "-5\n", "99999999999\n"] {
            #expect(PidFile.processID(contents: Array(text.utf8)) == nil, "\(text)")
        }
    }
}
