// SPDX-License-Identifier: GPL-3.0-or-later

/// MPD's error codes, as sent in `ACK [code@index]`.
public enum AckCode: Int, Sendable, Hashable {
    /// `ACK_ERROR_NOT_LIST`: never sent by `mpd` 0.23.
    case notList = 1
    /// `ACK_ERROR_ARG`: a bad argument.
    case arg = 2
    /// `ACK_ERROR_PASSWORD`: an incorrect password.
    case password = 3
    /// `ACK_ERROR_PERMISSION`: the client lacks a permission.
    case permission = 4
    /// `ACK_ERROR_UNKNOWN`: an unknown command, a tokenizer error, or a generic failure.
    case unknown = 5
    /// `ACK_ERROR_NO_EXIST`: no such song, directory, playlist, output, channel…
    case noExist = 50
    /// `ACK_ERROR_PLAYLIST_MAX`: a queue or playlist would grow too large.
    case playlistMax = 51
    /// `ACK_ERROR_SYSTEM`: an operating-system error.
    case system = 52
    /// `ACK_ERROR_PLAYLIST_LOAD`: never sent by `mpd` 0.23.
    case playlistLoad = 53
    /// `ACK_ERROR_UPDATE_ALREADY`: the update queue is full.
    case updateAlready = 54
    /// `ACK_ERROR_PLAYER_SYNC`: not playing, or no current song.
    case playerSync = 55
    /// `ACK_ERROR_EXIST`: the thing already exists.
    case exist = 56
}

/// A client-visible failure: rendered as `ACK [code@index] {command} message`.
public struct AckError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error code.
    public var code: AckCode
    /// The message text, exactly as `mpd` words it.
    public var message: String

    /// Creates an error with `code` and `message`.
    public init(_ code: AckCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The ACK line without its newline.
    ///
    /// - Parameters:
    ///   - index: the position in the command list, 0 outside lists.
    ///   - command: the command's table name, or empty when the failure came before lookup.
    public func line(index: Int, command: String) -> String {
        "ACK [\(self.code.rawValue)@\(index)] {\(command)} \(self.message)"
    }

    /// `code: message`, for logs.
    public var description: String { "\(self.code.rawValue): \(self.message)" }
}
