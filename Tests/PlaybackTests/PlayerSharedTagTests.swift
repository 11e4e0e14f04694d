// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Playback

@Suite struct PlayerSharedTagTests {
    @Test func tagsWaitUntilTheirRevisionIsPlayedAndOlderOnesGo() {
        let shared = PlayerShared(replayGain: ReplayGainSettings(), retryNanoseconds: 0)
        shared.publishTags([TagItem(.title, "A")], revision: 1)
        shared.publishTags([TagItem(.title, "B")], revision: 2)
        shared.publishTags([TagItem(.title, "C")], revision: 3)
        // The outputs played revision 2 first (1 was flushed or played over): 1 and 2 go, 3 waits.
        #expect(shared.takeTags(revision: 2) == [TagItem(.title, "B")])
        #expect(shared.takeTags(revision: 1) == nil)
        #expect(shared.takeTags(revision: 3) == [TagItem(.title, "C")])
        #expect(shared.takeTags(revision: 3) == nil)
    }

    @Test func aStreamFasterThanThePipeLosesItsOldestTags() {
        let shared = PlayerShared(replayGain: ReplayGainSettings(), retryNanoseconds: 0)
        let count = PlayerShared.pendingTagLimit + 2
        for revision in 1...UInt64(count) { shared.publishTags([TagItem(.title, "\(revision)")], revision: revision) }
        #expect(shared.takeTags(revision: 1) == nil)
        #expect(shared.takeTags(revision: 2) == nil)
        #expect(shared.takeTags(revision: 3) == [TagItem(.title, "3")])
        #expect(shared.takeTags(revision: UInt64(count)) == [TagItem(.title, "\(count)")])
    }
}
