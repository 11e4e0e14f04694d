// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Playback

/// `routes` as `mpd` 0.23.12 reads it, and the filter templates; the messages are those Debian's `mpd` logged
/// for each value (`Failed to initialize filter chain for 'a': …`).
@Suite struct RouteTableTests {
    @Test(arguments: [
        ("0>1 1>0", "Malformed 'routes' specification"),
        ("", "Malformed 'routes' specification"),
        ("0>9", "Invalid destination channel number: 9"),
        ("9>0", "Invalid source channel number: 9"),
        ("-1>0", "Invalid source channel number: 4294967295"),
        ("0>1,", "Malformed 'routes' specification"),
        ("a>b", "Malformed 'routes' specification"),
        ("0>", "Malformed 'routes' specification"),
        ("0>1x", "Malformed 'routes' specification"),
        ("0>1,,1>0", "Malformed 'routes' specification"),
        ("9>0x", "Invalid source channel number: 9"),
        ("0>9x", "Invalid destination channel number: 9"),
    ])
    func refusesWhatMpdRefuses(routes: String, message: String) {
        #expect(throws: FilterError(message)) { try RouteTable(routes: routes) }
    }

    @Test func readsWhatMpdReads() throws {
        #expect(try RouteTable(routes: " 0 > 1 , 1>0 ").sources == [1, 0])
        // strtoul: a sign, leading zeros, a number taken modulo 2^32.
        #expect(try RouteTable(routes: "+1>0").sources == [1])
        #expect(try RouteTable(routes: "07>0").sources == [7])
        #expect(try RouteTable(routes: "4294967296>1").sources == [nil, 0])
        // The last source named for a destination wins; a destination without one is silent.
        #expect(try RouteTable(routes: "0>2, 1>2").sources == [nil, nil, 1])
    }

    @Test func copiesChannelsAndSilencesTheRest() throws {
        let table = try RouteTable(routes: "2>0, 0>1, 1>3")
        let input: [Int16] = [10, 11, 20, 21]  // two stereo frames: channel 2 does not exist
        var output = [Int16](repeating: 99, count: 8)
        input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { target in
                table.apply(
                    source.baseAddress!, frames: 2, inputChannels: 2, bytesPerSample: 2, into: target.baseAddress!)
            }
        }
        #expect(output == [0, 10, 0, 11, 0, 20, 0, 21])
    }

    @Test func buildsTheChainAsMpd() {
        let templates: [FilterRegistry.Template] = [
            ["name": "swap", "plugin": "route", "routes": "1>0, 0>1"], ["name": "n", "plugin": "null"],
            ["name": "loud", "plugin": "normalize"], ["name": "ff", "plugin": "ffmpeg"], ["name": "none"],
            ["name": "swap", "plugin": "null"],
        ]
        let swap = PCMFilter.route(RouteTable(sources: [1, 0]))
        var (chain, error, used) = FilterRegistry.chain(
            normalization: true, filters: "swap,,n,loud,", templates: templates)
        #expect(chain == [.normalize, swap, .null, .normalize])
        #expect(error == nil)
        #expect(used == [0, 1, 2])
        // Names are not trimmed; the filters before a failure stay.
        (chain, error, used) = FilterRegistry.chain(normalization: false, filters: "swap, n", templates: templates)
        #expect(chain == [swap])
        #expect(error == FilterError("Filter template not found:  n"))
        (chain, error, used) = FilterRegistry.chain(normalization: false, filters: "ff,swap", templates: templates)
        #expect(chain.isEmpty)
        #expect(used == [3], "a template that fails was used: its keys are checked")
        #expect(error == FilterError("No such filter plugin: ffmpeg"))
        (chain, error, used) = FilterRegistry.chain(normalization: false, filters: "none", templates: templates)
        #expect(error == FilterError("No filter plugin specified"))
        #expect(FilterRegistry.readKeys(of: "route") == ["name", "plugin", "routes"])
        #expect(FilterRegistry.readKeys(of: nil) == ["name", "plugin"])
        // A route without `routes` passes stereo through.
        #expect(
            FilterRegistry.chain(normalization: false, filters: "r", templates: [["name": "r", "plugin": "route"]])
                .chain == [.route(.stereo)])
    }
}
