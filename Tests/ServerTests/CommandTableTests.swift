// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Testing

@testable import Server

struct CommandTableTests {
    @Test func sortedAndUnique() {
        let names = CommandTable.standard.entries.map(\.name)
        #expect(names == names.sorted())
        #expect(Set(names).count == names.count)
    }

    @Test func minimumNotAboveMaximum() {
        for command in CommandTable.standard.entries {
            if let minimum = command.minimumArguments, let maximum = command.maximumArguments {
                #expect(minimum <= maximum, "\(command.name)")
            }
        }
    }

    @Test func namesAreProtocolWords() {
        for command in CommandTable.standard.entries {
            #expect(command.name.allSatisfy { $0.isLowercase || $0 == "_" }, "\(command.name)")
        }
    }

    @Test(arguments: [
        (0, nil as String?), (1, "wrong number of arguments for \"ping\""),
    ])
    func pingArgumentCount(count: Int, message: String?) {
        let ping = CommandTable.standard.lookup("ping")!
        do {
            try ping.checkArgumentCount(count)
            #expect(message == nil)
        } catch {
            #expect(error.message == message)
        }
    }
}
