// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Zeroconf

struct PublisherStateMachineTests {
    typealias Machine = PublisherStateMachine

    private static let name = "Music Player @ den"

    private func machine() -> Machine {
        Machine(name: Self.name, alternative: AvahiName.alternative)
    }

    /// A machine whose service is established, and the actions that got it there.
    private func published() -> Machine {
        var machine = self.machine()
        _ = machine.handle(.start)
        _ = machine.handle(.timer)
        _ = machine.handle(.client(.running))
        _ = machine.handle(.groupEstablished)
        return machine
    }

    @Test func startsOnTheAvahiThreadThenPublishesWhenRunning() {
        var machine = self.machine()
        #expect(machine.status == .stopped)
        // The first client is created from a timer so that it happens on the Avahi thread.
        #expect(machine.handle(.start) == [.armTimer(milliseconds: 0)])
        #expect(machine.handle(.timer) == [.createClient])
        #expect(machine.handle(.client(.registering)) == [])
        #expect(machine.status == .registering(Self.name))
        #expect(machine.handle(.client(.running)) == [.publish(name: Self.name)])
        #expect(machine.status == .registering(Self.name))
        #expect(machine.handle(.groupEstablished) == [.report(.published(name: Self.name))])
        #expect(machine.status == .published(Self.name))
    }

    @Test func startTwiceIsIgnored() {
        var machine = self.machine()
        _ = machine.handle(.start)
        #expect(machine.handle(.start) == [])
    }

    @Test func anUnreachableBusIsReportedOnceAndRetried() {
        var machine = self.machine()
        _ = machine.handle(.start)
        _ = machine.handle(.timer)
        #expect(
            machine.handle(.clientCreationFailed(reason: "Daemon not running"))
                == [
                    .report(.busUnreachable(reason: "Daemon not running")),
                    .armTimer(milliseconds: Machine.busRetryDelay),
                ])
        #expect(machine.status == .waitingForBus)
        #expect(machine.handle(.timer) == [.createClient])
        #expect(
            machine.handle(.clientCreationFailed(reason: "Daemon not running"))
                == [.armTimer(milliseconds: Machine.busRetryDelay)])
        #expect(machine.handle(.timer) == [.createClient])
        #expect(machine.handle(.client(.connecting)) == [.report(.daemonAbsent)])
        #expect(machine.status == .waitingForDaemon)
        #expect(machine.handle(.client(.running)) == [.publish(name: Self.name)])
    }

    @Test func aMissingDaemonIsReportedOnceUntilItAppears() {
        var machine = self.machine()
        _ = machine.handle(.start)
        _ = machine.handle(.timer)
        #expect(machine.handle(.client(.connecting)) == [.report(.daemonAbsent)])
        #expect(machine.handle(.client(.connecting)) == [])
        #expect(machine.handle(.client(.running)) == [.publish(name: Self.name)])
    }

    @Test func aDaemonRestartReplacesTheClientAndRepublishes() {
        var machine = self.published()
        #expect(
            machine.handle(.client(.failure(disconnected: true, reason: "Daemon connection failed")))
                == [
                    .report(.daemonLost(reason: "Daemon connection failed")),
                    .armTimer(milliseconds: Machine.reconnectDelay),
                ])
        #expect(machine.status == .waitingForDaemon)
        // The dead client is freed from the timer, never inside its own callback.
        #expect(machine.handle(.client(.running)) == [])
        #expect(machine.handle(.groupEstablished) == [])
        #expect(machine.handle(.timer) == [.freeClient, .createClient])
        #expect(machine.handle(.client(.connecting)) == [.report(.daemonAbsent)])
        #expect(machine.handle(.client(.running)) == [.publish(name: Self.name)])
        #expect(machine.handle(.groupEstablished) == [.report(.published(name: Self.name))])
    }

    @Test func otherClientFailuresRetryLater() {
        var machine = self.published()
        #expect(
            machine.handle(.client(.failure(disconnected: false, reason: "Access denied")))
                == [
                    .report(.clientFailed(reason: "Access denied")), .armTimer(milliseconds: Machine.failureRetryDelay),
                ])
        #expect(machine.handle(.timer) == [.freeClient, .createClient])
    }

    @Test func hostNameChangesWithdrawUntilRunningAgain() {
        var machine = self.published()
        #expect(machine.handle(.client(.registering)) == [.withdraw])
        #expect(machine.status == .registering(Self.name))
        #expect(machine.handle(.client(.collision)) == [])
        #expect(machine.handle(.client(.running)) == [.publish(name: Self.name)])
    }

    @Test func aCollisionTakesAvahisAlternativeName() {
        var machine = self.machine()
        _ = machine.handle(.start)
        _ = machine.handle(.timer)
        _ = machine.handle(.client(.running))
        let second = Self.name + " #2"
        #expect(
            machine.handle(.collision) == [.report(.renamed(from: Self.name, to: second)), .publish(name: second)])
        #expect(
            machine.handle(.collision) == [
                .report(.renamed(from: second, to: Self.name + " #3")), .publish(name: Self.name + " #3"),
            ])
        #expect(machine.handle(.groupEstablished) == [.report(.published(name: Self.name + " #3"))])
        #expect(machine.status == .published(Self.name + " #3"))
        #expect(machine.name == Self.name + " #3")
    }

    @Test func endlessCollisionsPauseInsteadOfSpinning() {
        var machine = self.machine()
        _ = machine.handle(.start)
        _ = machine.handle(.timer)
        _ = machine.handle(.client(.running))
        var actions: [Machine.Action] = []
        for _ in 0..<Machine.maximumRenames { actions = machine.handle(.collision) }
        #expect(actions.last == .armTimer(milliseconds: Machine.failureRetryDelay))
        #expect(machine.handle(.timer) == [.publish(name: machine.name)])
    }

    @Test func aGroupFailureIsRetried() {
        var machine = self.published()
        #expect(
            machine.handle(.groupFailure(reason: "Bad state"))
                == [.report(.publishFailed(reason: "Bad state")), .armTimer(milliseconds: Machine.failureRetryDelay)])
        #expect(machine.status == .registering(Self.name))
        #expect(machine.handle(.timer) == [.publish(name: Self.name)])
    }

    @Test func aRetryAfterTheClientStoppedRunningWaits() {
        var machine = self.published()
        _ = machine.handle(.groupFailure(reason: "Bad state"))
        _ = machine.handle(.client(.registering))
        #expect(machine.handle(.timer) == [])
        #expect(machine.handle(.client(.running)) == [.publish(name: Self.name)])
    }

    @Test func stopFreesTheClientAndReportsTheWithdrawal() {
        var machine = self.published()
        #expect(machine.handle(.stop) == [.freeClient, .report(.withdrawn(name: Self.name))])
        #expect(machine.status == .stopped)
        #expect(machine.handle(.timer) == [])
        #expect(machine.handle(.client(.running)) == [])
    }

    @Test func stopBeforePublishingReportsNothing() {
        var machine = self.machine()
        _ = machine.handle(.start)
        #expect(machine.handle(.stop) == [.freeClient])
        #expect(machine.handle(.start) == [])
    }
}
