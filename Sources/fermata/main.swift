// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Curl
import FFmpeg
import Formats
import Glibc
import Posix

// Before any allocation of note and any thread: glibc's thresholds as Fermata wants them (see the function).
configureAllocator()

let commandLine: CommandLineOptions
do {
    commandLine = try CommandLineOptions(Array(CommandLine.arguments.dropFirst()))
} catch {
    try? FileDescriptor.standardError.writeAll("fermata: \(error.message)\n\(CommandLineOptions.usage)\n".utf8)
    exit(64)
}
if commandLine.showHelp {
    print(CommandLineOptions.usage)
    exit(0)
}
if commandLine.showPluginSchemes {
    for scheme in FFmpegLibraries.shared.inputSchemes() { print("input", scheme) }
    for scheme in FFmpegLibraries.shared.decoderSchemes() { print("decoder", scheme) }
    for scheme in CurlGlobal.protocols { print("curl", scheme) }
    for (name, reason) in FormatRegistry.lazyPluginFailures() { print("unavailable", name, reason) }
    exit(0)
}
if commandLine.scanWorker {
    exit(ScanWorker.serve(input: FileDescriptor(rawValue: 0), output: FileDescriptor(rawValue: 1)))
}
if commandLine.showVersion {
    print("Fermata \(Daemon.version) (MPD protocol \(Daemon.protocolVersion))")
    exit(0)
}
do {
    try Daemon.run(commandLine)
} catch {
    try? FileDescriptor.standardError.writeAll("fermata: \(error.description)\n".utf8)
    exit(1)
}
