// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import MPDProtocol

/// The session's decisions, event by event: no socket, no thread, no event loop.
struct ClientSessionTests {
    private typealias Session = ClientSession

    private func line(_ text: String) -> Session.Event { .line(Array(text.utf8)) }

    private func request(_ name: String, _ arguments: String...) -> Tokenizer.Request {
        Tokenizer.Request(name: name, arguments: arguments)
    }

    /// A session inside an open command list holding `lines`.
    private func list(_ lines: [String], okMode: Bool, limit: Int = 2048 * 1024) -> Session {
        var session = Session(maxCommandListSize: limit)
        #expect(session.handle(self.line(okMode ? "command_list_ok_begin" : "command_list_begin")) == [])
        for text in lines { #expect(session.handle(self.line(text)) == []) }
        #expect(session.state == .commandList(okMode: okMode))
        return session
    }

    /// A session whose list `ping`, `command`, `ping` waits on `command`'s deferred reply.
    private func deferredInList(_ command: String, okMode: Bool, isBackground: Bool) -> Session {
        var session = self.list(["ping", command, "ping"], okMode: okMode)
        _ = session.handle(self.line("command_list_end"))
        _ = session.handle(.executed(.ok))
        #expect(session.handle(.outputMeasured(0)).count == 1)
        #expect(session.handle(.executed(.deferred(isBackground: isBackground))) == [.startDeferred])
        #expect(session.state == .deferred)
        return session
    }

    // MARK: - Single commands

    @Test func aCommandRunsThenAnswersOKOnceOutputIsMeasured() {
        var session = Session()
        #expect(session.state == .ready)
        #expect(session.acceptsInput)
        #expect(session.handle(self.line("play 6")) == [.execute(self.request("play", "6"), index: 0)])
        #expect(session.state == .running)
        #expect(!session.acceptsInput)
        #expect(session.handle(.executed(.ok)) == [.write("OK\n"), .measureOutput])
        #expect(session.state == .running)
        #expect(session.handle(.outputMeasured(3)) == [])
        #expect(session.state == .ready)
        #expect(session.acceptsInput)
    }

    @Test func aFailedCommandAnswersItsACKAtIndexZero() {
        var session = Session()
        _ = session.handle(self.line("ping 1"))
        let error = AckError(.arg, "wrong number of arguments for \"ping\"")
        #expect(
            session.handle(.executed(.failed(error, command: "ping")))
                == [.write("ACK [2@0] {ping} wrong number of arguments for \"ping\"\n"), .measureOutput]
        )
        #expect(session.handle(.outputMeasured(0)) == [])
        #expect(session.state == .ready)
    }

    @Test func outputBeyondTheLimitClosesAtOnceAndAtTheLimitDoesNot() {
        var atLimit = Session(maxOutputBufferSize: 100)
        _ = atLimit.handle(self.line("ping"))
        _ = atLimit.handle(.executed(.ok))
        #expect(atLimit.handle(.outputMeasured(100)) == [])
        #expect(atLimit.state == .ready)

        var beyond = Session(maxOutputBufferSize: 100)
        _ = beyond.handle(self.line("ping"))
        _ = beyond.handle(.executed(.ok))
        #expect(beyond.handle(.outputMeasured(101)) == [.close(.outputBufferFull)])
        #expect(beyond.state == .closing)
        #expect(!Session.Closing.outputBufferFull.flushesOutput)
        #expect(beyond.handle(self.line("ping")) == [])
    }

    @Test func commandListEndOutsideAListIsAnOrdinaryCommand() {
        var session = Session()
        #expect(session.handle(self.line("command_list_end")) == [.execute(self.request("command_list_end"), index: 0)])
    }

    @Test(arguments: ["", " ping", "Ping", "PING", "GET / HTTP/1.1", "1ping", "_ping"])
    func aLineNotStartingWithALowerCaseLetterClosesWithoutAWord(text: String) {
        var session = Session()
        #expect(session.handle(self.line(text)) == [.close(.malformedLine)])
        #expect(session.state == .closing)
        #expect(!session.acceptsInput)
        #expect(!Session.Closing.malformedLine.flushesOutput)
    }

    @Test func aSyntaxErrorAnswersItsACKWithoutRunningAnything() {
        var session = Session()
        #expect(
            session.handle(self.line("find \"x"))
                == [.write("ACK [5@0] {} Missing closing '\"'\n"), .measureOutput]
        )
        #expect(session.handle(.outputMeasured(0)) == [])
        #expect(session.state == .ready)
        let tooMany = "add" + String(repeating: " x", count: Tokenizer.maximumArguments + 1)
        #expect(session.handle(self.line(tooMany)) == [.write("ACK [2@0] {} Too many arguments\n"), .measureOutput])
    }

    @Test func anInvalidWordCharacterAnswersThenClosesAfterFlushing() {
        var session = Session(maxOutputBufferSize: 100)
        #expect(
            session.handle(self.line("pi-ng"))
                == [.write("ACK [5@0] {} Invalid word character\n"), .close(.invalidWordCharacter), .measureOutput]
        )
        #expect(Session.Closing.invalidWordCharacter.flushesOutput)
        #expect(session.handle(.outputMeasured(50)) == [])
        #expect(session.state == .closing)

        // Output past the limit discards even that ACK.
        var full = Session(maxOutputBufferSize: 100)
        _ = full.handle(self.line("pi-ng"))
        #expect(full.handle(.outputMeasured(101)) == [.close(.outputBufferFull)])
    }

    @Test func closeClosesAfterFlushingAndKillStopsTheDaemon() {
        var closing = Session()
        _ = closing.handle(self.line("close"))
        #expect(closing.handle(.executed(.close)) == [.close(.requested)])
        #expect(closing.state == .closing)
        #expect(Session.Closing.requested.flushesOutput)
        #expect(closing.handle(self.line("ping")) == [])

        var killing = Session()
        _ = killing.handle(self.line("kill"))
        #expect(killing.handle(.executed(.kill)) == [.kill])
        #expect(killing.state == .ready)
    }

    @Test func lineTooLongInputEndedAndTimeoutClose() {
        var long = Session()
        #expect(long.handle(.lineTooLong) == [.close(.lineTooLong)])
        #expect(!Session.Closing.lineTooLong.flushesOutput)

        var ended = Session()
        #expect(ended.handle(.inputEnded) == [.close(.inputEnded)])
        #expect(Session.Closing.inputEnded.flushesOutput)

        var silent = Session()
        #expect(silent.handle(.timedOut) == [.close(.timedOut)])
        #expect(!Session.Closing.timedOut.flushesOutput)
        #expect(silent.state == .closing)
        #expect(silent.handle(.timedOut) == [])

        // A list being collected is dropped with the connection.
        var collecting = self.list(["ping"], okMode: false)
        #expect(collecting.handle(.inputEnded) == [.close(.inputEnded)])
    }

    // MARK: - Command lists

    @Test func aPlainListRunsItemByItemThenAnswersOneOK() {
        var session = self.list(["ping", "play 6"], okMode: false)
        #expect(session.handle(self.line("command_list_end")) == [.execute(self.request("ping"), index: 0)])
        #expect(session.handle(.executed(.ok)) == [.measureOutput])
        #expect(session.handle(.outputMeasured(0)) == [.execute(self.request("play", "6"), index: 1)])
        #expect(session.handle(.executed(.ok)) == [.measureOutput])
        #expect(session.handle(.outputMeasured(0)) == [.write("OK\n")])
        #expect(session.state == .ready)
    }

    @Test func aLongListKeepsEveryLineInOrder() {
        // Lines are appended in place while collecting (the phase lets go of the list first): none is lost or
        // reordered, and each runs with its own index.
        let count = 1000
        var session = self.list((0..<count).map { "ping \($0)" }, okMode: false)
        #expect(session.handle(self.line("command_list_end")) == [.execute(self.request("ping", "0"), index: 0)])
        for index in 1..<count {
            #expect(session.handle(.executed(.ok)) == [.measureOutput])
            #expect(session.handle(.outputMeasured(0)) == [.execute(self.request("ping", "\(index)"), index: index)])
        }
        #expect(session.handle(.executed(.ok)) == [.measureOutput])
        #expect(session.handle(.outputMeasured(0)) == [.write("OK\n")])
        #expect(session.state == .ready)
    }

    @Test func anOKListAnswersListOKAfterEachItem() {
        var session = self.list(["ping", "ping"], okMode: true)
        #expect(session.handle(self.line("command_list_end")) == [.execute(self.request("ping"), index: 0)])
        #expect(session.handle(.executed(.ok)) == [.write("list_OK\n"), .measureOutput])
        #expect(session.handle(.outputMeasured(8)) == [.execute(self.request("ping"), index: 1)])
        #expect(session.handle(.executed(.ok)) == [.write("list_OK\n"), .measureOutput])
        #expect(session.handle(.outputMeasured(16)) == [.write("OK\n")])
        #expect(session.state == .ready)
    }

    @Test(arguments: [false, true])
    func anEmptyListAnswersOK(okMode: Bool) {
        var session = self.list([], okMode: okMode)
        #expect(session.handle(self.line("command_list_end")) == [.write("OK\n")])
        #expect(session.state == .ready)
    }

    @Test func theFirstFailureStopsTheListWithItsIndexAndNoFinalOK() {
        var session = self.list(["ping", "ping", "foo", "ping"], okMode: true)
        _ = session.handle(self.line("command_list_end"))
        _ = session.handle(.executed(.ok))
        #expect(session.handle(.outputMeasured(0)) == [.execute(self.request("ping"), index: 1)])
        _ = session.handle(.executed(.ok))
        #expect(session.handle(.outputMeasured(0)) == [.execute(self.request("foo"), index: 2)])
        let unknown = AckError(.unknown, "unknown command \"foo\"")
        #expect(
            session.handle(.executed(.failed(unknown, command: "")))
                == [.write("ACK [5@2] {} unknown command \"foo\"\n"), .measureOutput]
        )
        #expect(session.handle(.outputMeasured(0)) == [])
        #expect(session.state == .ready)
    }

    @Test func aSyntaxErrorInAListStopsItAtItsIndex() {
        var session = self.list(["ping", "find \"x"], okMode: false)
        _ = session.handle(self.line("command_list_end"))
        _ = session.handle(.executed(.ok))
        #expect(
            session.handle(.outputMeasured(0)) == [.write("ACK [5@1] {} Missing closing '\"'\n"), .measureOutput]
        )
        #expect(session.handle(.outputMeasured(0)) == [])
        #expect(session.state == .ready)
    }

    @Test func outputBeyondTheLimitInsideAListClosesBeforeTheNextItem() {
        var session = Session(maxOutputBufferSize: 100)
        _ = session.handle(self.line("command_list_ok_begin"))
        _ = session.handle(self.line("listall"))
        _ = session.handle(self.line("ping"))
        _ = session.handle(self.line("command_list_end"))
        #expect(session.handle(.executed(.ok)) == [.write("list_OK\n"), .measureOutput])
        #expect(session.handle(.outputMeasured(101)) == [.close(.outputBufferFull)])
        #expect(session.state == .closing)
    }

    @Test func aListMayHoldMaxCommandListSizeBytesCountingNewlinesAndNoMore() {
        // "ping\n" is 5 bytes: two fit in 10.
        var session = self.list(["ping", "ping"], okMode: false, limit: 10)
        #expect(session.handle(self.line("p")) == [.close(.commandListTooLarge)])
        #expect(session.state == .closing)
        #expect(!Session.Closing.commandListTooLarge.flushesOutput)
    }

    @Test func listLinesAreCollectedAsTheyAreEvenListBeginsAndBadSyntax() {
        var session = self.list(["command_list_begin", "find \"x"], okMode: false)
        #expect(
            session.handle(self.line("command_list_end")) == [.execute(self.request("command_list_begin"), index: 0)])
    }

    @Test func aMalformedLineInAListStillCloses() {
        var session = self.list(["ping"], okMode: true)
        #expect(session.handle(self.line("PING")) == [.close(.malformedLine)])
    }

    @Test func closeKillAndIdleEndAListWithNoFinalOK() {
        var closing = self.list(["close", "ping"], okMode: true)
        _ = closing.handle(self.line("command_list_end"))
        #expect(closing.handle(.executed(.close)) == [.close(.requested)])
        #expect(closing.state == .closing)

        var killing = self.list(["kill", "ping"], okMode: true)
        _ = killing.handle(self.line("command_list_end"))
        #expect(killing.handle(.executed(.kill)) == [.kill])
        #expect(killing.state == .ready)

        var idling = self.list(["idle", "ping"], okMode: true)
        _ = idling.handle(self.line("command_list_end"))
        #expect(idling.handle(.executed(.idle(.all))) == [.stopTimeout])
        #expect(idling.state == .idle(.all))
    }

    // MARK: - Idle

    @Test func idleWaitsForASubscribedEventThenAnswersAndFlushes() {
        var session = Session()
        let player = IdleMask(.player)
        _ = session.handle(self.line("idle player"))
        #expect(session.handle(.executed(.idle(player))) == [.stopTimeout, .measureOutput])
        #expect(session.handle(.outputMeasured(0)) == [])
        #expect(session.state == .idle(player))
        #expect(session.isIdle)
        #expect(session.acceptsInput)

        #expect(session.handle(.idleEvents(IdleMask(.mixer))) == [])
        #expect(session.pendingIdle == IdleMask(.mixer))
        #expect(session.state == .idle(player))
        #expect(session.handle(.timedOut) == [])
        #expect(session.state == .idle(player))

        #expect(
            session.handle(.idleEvents(player))
                == [.write("changed: player\n"), .write("OK\n"), .restartTimeout, .flush]
        )
        #expect(session.state == .ready)
        // mpd 0.23 clears every pending event, the unsubscribed mixer too.
        #expect(session.pendingIdle == [])
    }

    @Test func idleAnswersAtOnceWhenSubscribedEventsArePending() {
        var session = Session()
        #expect(session.handle(.idleEvents([IdleMask(.database), IdleMask(.options)])) == [])
        #expect(session.pendingIdle == [IdleMask(.database), IdleMask(.options)])
        _ = session.handle(self.line("idle"))
        #expect(
            session.handle(.executed(.idle(.all)))
                == [
                    .stopTimeout, .write("changed: database\n"), .write("changed: options\n"), .write("OK\n"),
                    .restartTimeout, .flush, .measureOutput,
                ]
        )
        #expect(session.handle(.outputMeasured(0)) == [])
        #expect(session.state == .ready)
        #expect(session.pendingIdle == [])
    }

    @Test func noidleLeavesIdleWithAnEmptyReplyAndIsIgnoredOtherwise() {
        var session = Session()
        #expect(session.handle(self.line("noidle")) == [])
        #expect(session.state == .ready)
        _ = session.handle(self.line("idle"))
        _ = session.handle(.executed(.idle(.all)))
        _ = session.handle(.outputMeasured(0))
        #expect(session.handle(self.line("noidle")) == [.write("OK\n"), .restartTimeout])
        #expect(session.state == .ready)
        #expect(session.handle(self.line("noidle")) == [])

        // Not collected into a command list either.
        var collecting = self.list(["ping"], okMode: true)
        #expect(collecting.handle(self.line("noidle")) == [])
        #expect(collecting.handle(self.line("command_list_end")) == [.execute(self.request("ping"), index: 0)])
        #expect(collecting.handle(.executed(.ok)) == [.write("list_OK\n"), .measureOutput])
        #expect(collecting.handle(.outputMeasured(0)) == [.write("OK\n")])
    }

    @Test(arguments: ["ping", "idle", "command_list_begin", "noidle x"])
    func anyOtherLineWhileIdlingCloses(text: String) {
        var session = Session()
        _ = session.handle(self.line("idle"))
        _ = session.handle(.executed(.idle(.all)))
        _ = session.handle(.outputMeasured(0))
        #expect(session.handle(self.line(text)) == [.close(.commandDuringIdle)])
        #expect(!Session.Closing.commandDuringIdle.flushesOutput)
    }

    @Test func eventsDuringACommandAreKeptForTheNextIdle() {
        var session = Session()
        _ = session.handle(self.line("setvol 5"))
        #expect(session.handle(.idleEvents(IdleMask(.mixer))) == [])
        #expect(session.handle(.executed(.ok)) == [.write("OK\n"), .measureOutput])
        _ = session.handle(.outputMeasured(0))
        #expect(session.pendingIdle == IdleMask(.mixer))
    }

    // MARK: - Streamed replies

    @Test func aStreamFinishedInItsCommandsTurnIsMeasured() {
        var session = Session()
        _ = session.handle(self.line("listall"))
        #expect(session.handle(.executed(.stream)) == [.produceStream(whole: false)])
        #expect(session.state == .streaming)
        #expect(session.handle(.streamProduced(finished: true)) == [.write("OK\n"), .measureOutput])
        #expect(session.handle(.outputMeasured(10)) == [])
        #expect(session.state == .ready)
    }

    @Test func aStreamProducedOverSeveralTurnsHoldsInputThenAnswersOK() {
        var session = Session()
        _ = session.handle(self.line("listall"))
        _ = session.handle(.executed(.stream))
        #expect(session.handle(.streamProduced(finished: false)) == [])
        #expect(session.isStreaming)
        #expect(!session.acceptsInput)
        #expect(session.handle(self.line("ping")) == [])
        #expect(session.handle(.idleEvents(IdleMask(.player))) == [])
        #expect(session.handle(.streamProduced(finished: false)) == [])
        // Bounded by its producer, not measured.
        #expect(session.handle(.streamProduced(finished: true)) == [.write("OK\n")])
        #expect(session.state == .ready)
        #expect(session.pendingIdle == IdleMask(.player))
    }

    @Test func aSizedStreamWithinTheOutputBufferLimitIsProducedAsTheClientReads() {
        var session = Session(maxOutputBufferSize: 100)
        _ = session.handle(self.line("playlistinfo"))
        _ = session.handle(.executed(.stream))
        // What was queued, the reply and its `OK` (3 bytes) are exactly the limit.
        #expect(session.handle(.streamSized(97)) == [.produceStream(whole: false)])
        #expect(session.isStreaming)
        #expect(session.handle(.streamProduced(finished: false)) == [])
        #expect(session.handle(.streamProduced(finished: true)) == [.write("OK\n")])
        #expect(session.state == .ready)
    }

    @Test func aSizedStreamOverTheOutputBufferLimitClosesBeforeAnyOfItIsProduced() {
        var session = Session(maxOutputBufferSize: 100)
        _ = session.handle(self.line("plchanges 0"))
        _ = session.handle(.executed(.stream))
        #expect(session.handle(.streamSized(98)) == [.close(.outputBufferFull)])
        #expect(session.state == .closing)
        // Sized outside a stream: nothing happens.
        var ready = Session(maxOutputBufferSize: 100)
        #expect(ready.handle(.streamSized(1000)) == [])
        #expect(ready.state == .ready)
    }

    @Test func aStreamInAListIsProducedWhole() {
        var session = self.list(["listall", "ping"], okMode: true)
        _ = session.handle(self.line("command_list_end"))
        #expect(session.handle(.executed(.stream)) == [.produceStream(whole: true)])
        #expect(session.handle(.streamProduced(finished: true)) == [.write("list_OK\n"), .measureOutput])
        #expect(session.handle(.outputMeasured(0)) == [.execute(self.request("ping"), index: 1)])
    }

    @Test func aTimeoutWhileStreamingCloses() {
        var session = Session()
        _ = session.handle(self.line("listall"))
        _ = session.handle(.executed(.stream))
        _ = session.handle(.streamProduced(finished: false))
        #expect(session.handle(.timedOut) == [.close(.timedOut)])
    }

    // MARK: - Deferred replies

    @Test func aDeferredReplyHoldsInputUntilItsWorkIsDone() {
        var session = Session()
        _ = session.handle(self.line("albumart a.mp3 0"))
        #expect(session.handle(.executed(.deferred(isBackground: false))) == [.startDeferred])
        #expect(session.state == .deferred)
        #expect(session.isDeferred)
        #expect(!session.acceptsInput)
        #expect(session.handle(self.line("ping")) == [])
        #expect(session.handle(.deferredFinished(.ok)) == [.write("OK\n"), .measureOutput])
        #expect(session.handle(.outputMeasured(0)) == [])
        #expect(session.state == .ready)
    }

    @Test func aDeferredFailureNamesItsCommand() {
        var session = Session()
        _ = session.handle(self.line("albumart a.mp3 0"))
        _ = session.handle(.executed(.deferred(isBackground: false)))
        let error = AckError(.noExist, "No file exists")
        #expect(
            session.handle(.deferredFinished(.failed(error, command: "albumart")))
                == [.write("ACK [50@0] {albumart} No file exists\n"), .measureOutput]
        )
    }

    @Test func aDeferredReplyMayStream() {
        var session = Session()
        _ = session.handle(self.line("load http://x"))
        _ = session.handle(.executed(.deferred(isBackground: false)))
        #expect(session.handle(.deferredFinished(.stream)) == [.produceStream(whole: false)])
        #expect(session.isStreaming)
    }

    @Test func aDeferredReplyInAListResumesTheList() {
        var session = self.list(["ping", "readpicture a.mp3 0", "ping"], okMode: true)
        _ = session.handle(self.line("command_list_end"))
        _ = session.handle(.executed(.ok))
        #expect(session.handle(.outputMeasured(0)) == [.execute(self.request("readpicture", "a.mp3", "0"), index: 1)])
        #expect(session.handle(.executed(.deferred(isBackground: false))) == [.startDeferred])
        #expect(session.handle(.deferredFinished(.ok)) == [.write("list_OK\n"), .measureOutput])
        #expect(session.handle(.outputMeasured(0)) == [.execute(self.request("ping"), index: 2)])
        _ = session.handle(.executed(.ok))
        #expect(session.handle(.outputMeasured(0)) == [.write("OK\n")])
    }

    /// A failure stops the list; a background command's ACK counts from 0 and names no command.
    @Test(arguments: [
        (false, "ACK [52@1] {readpicture} Decoder failed\n"), (true, "ACK [52@0] {} Decoder failed\n"),
    ])
    func aDeferredFailureInAListStopsIt(isBackground: Bool, ack: String) {
        var session = self.deferredInList("readpicture a.mp3 0", okMode: true, isBackground: isBackground)
        let error = AckError(.system, "Decoder failed")
        #expect(
            session.handle(.deferredFinished(.failed(error, command: "readpicture"))) == [.write(ack), .measureOutput]
        )
        #expect(session.handle(.outputMeasured(0)) == [])
        #expect(session.state == .ready)
    }

    @Test func aBackgroundReplyDropsTheRestOfItsListWithNoListOK() {
        var session = self.deferredInList("getfingerprint a.mp3", okMode: true, isBackground: true)
        #expect(session.handle(.deferredFinished(.ok)) == [.write("OK\n"), .measureOutput])
        #expect(session.handle(.outputMeasured(0)) == [])
        #expect(session.state == .ready)
    }

    @Test func aTimeoutWhileDeferredCloses() {
        var session = Session()
        _ = session.handle(self.line("albumart a.mp3 0"))
        _ = session.handle(.executed(.deferred(isBackground: false)))
        #expect(session.handle(.timedOut) == [.close(.timedOut)])
        #expect(session.handle(.deferredFinished(.ok)) == [])
    }

    // MARK: - Answers out of turn

    @Test func answersNobodyAskedForChangeNothing() {
        var session = Session()
        #expect(session.handle(.executed(.ok)) == [])
        #expect(session.handle(.streamProduced(finished: true)) == [])
        #expect(session.handle(.outputMeasured(1 << 40)) == [])
        #expect(session.handle(.deferredFinished(.ok)) == [])
        #expect(session.state == .ready)
    }
}
