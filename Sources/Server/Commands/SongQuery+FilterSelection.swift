// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import MPDProtocol

extension SongQuery {
    /// The query a parsed `FILTER [sort TYPE] [window START:END]` asks for.
    init(_ selection: FilterSelection) {
        self.init(filter: selection.filter, sort: selection.sort, window: selection.window)
    }
}

extension QueryError {
    /// The ACK `mpd` answers.
    var ack: AckError {
        switch self {
        case .noSuchDirectory: AckError(.noExist, "No such directory")
        }
    }
}
