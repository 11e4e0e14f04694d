// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

let commandLine: CommandLineOptions
do {
    commandLine = try CommandLineOptions(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("fermata: \(error.message)\n\(CommandLineOptions.usage)\n".utf8))
    exit(64)
}
if commandLine.showHelp {
    print(CommandLineOptions.usage)
    exit(0)
}
if commandLine.showVersion {
    print("Fermata \(Daemon.version) (MPD protocol \(Daemon.protocolVersion))")
    exit(0)
}
do {
    try Daemon.run(commandLine)
} catch {
    FileHandle.standardError.write(Data("fermata: \(error.description)\n".utf8))
    exit(1)
}
