"""Differential cases: find and search (protocol §2.9, filters §3, sort and window §5).

Values come from tools/make-fixtures.py (special_songs(), awkward_songs()).  Cases
that would match most of the library use `count`, or a `window`, to keep the
transcripts readable; a few return the whole library on purpose.
"""

import hashlib

from mpdtest import arg, differential_table, fvalue, fx

ND = "base " + arg("Numbers & Dates")         # legacy base pair: 10 songs
QDIR = "Quotes/It's \"Q\" \\ dir"


def mbid(seed: str) -> str:
    """tools/make-fixtures.py's MusicBrainz ids."""
    h = hashlib.sha1(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def both(filter_args: str) -> str:
    """The same filter through find and search (case-sensitive vs folding)."""
    return f"find {filter_args}\nsearch {filter_args}\n"


# --- legacy TYPE VALUE pairs --------------------------------------------------

test_legacy_pairs = differential_table({
    "artist": both('artist "The Band"'),
    "artist, other letter case of the value": both('artist "the band"'),
    "artist substring": both('artist "Band"'),
    "tag name in upper case": both('ARTIST "The Band"'),
    "tag name quoted": both('"Artist" "The Band"'),
    "two pairs are ANDed": both('artist "Picture Person" title "With Picture"'),
    "two pairs, one misses": both('artist "Picture Person" title "Nope"'),
    "same tag twice": both('artist "The Band" artist "The Band"'),
    "empty value in find: songs without the tag": 'find album ""\n',
    "empty artist: songs without Artist": 'count artist ""\n',
    "empty value in search: substring of everything": 'count title ""\nsearch album "" window 0:3\n',
    "albumartist falls back to artist": both('albumartist "The Band"'),
    "albumartist present": both(arg("albumartist") + " " + arg("Ångström & Co")),
    "artistsort": both('artistsort "Band, The"'),
    "artistsort does not fall back": both('artistsort "The Band"'),
    "albumartistsort": both('albumartistsort "Band, The"'),
    "albumartistsort falls back": both('albumartistsort "The Band"'),
    "albumsort falls back to album": both('albumsort "Fallbacks"'),
    "any": both('any "Picture Person"'),
    "any substring": 'search any "person"\ncount any "Person"\n',
    "any does not match the file name": both('any "v1 only"'),
    "file": both(arg("file") + " " + arg("Old Tags/v1 only.mp3")),
    "file substring": 'find file "v1"\nsearch file "V1 ONLY"\n',
    "filename (old name of file)": both('filename "Old Tags/v1 only.mp3"'),
    "FILE in upper case": both('FILE "Old Tags/v1 only.mp3"'),
    "base": both('base "Old Tags"'),
    "base and tag": both('base "Old Tags" artist "Old Timer"'),
    "base of a song": both('base "Old Tags/v1 only.mp3"'),
    "base of a nonexistent directory": both("base nonexistent"),
    "base with a trailing slash": both('base "Old Tags/"'),
    "base empty": both('base ""'),
    "base slash": both("base /"),
    "base dot dot": both("base ../x"),
    "Base is not base": both('Base "Old Tags"'),
    "modified-since": 'count modified-since "2020-09-13T12:27:50Z"\n',
    "modified-since unix time": 'count modified-since 1600000070\n',
    "track 03 vs 3": both('track "3"') + both('track "03"'),
    "track as text": both('track "3/12"'),
    "date as text": both('date "c. 1990"'),
    "unicode value": both(arg("artist") + " " + arg("坂本龍一")),
    "quote and apostrophe": both(arg("artist") + " " + arg("O'Brien")) + both(
        "artist " + arg('Say "Hi"')),
    "backslashes": both("artist " + arg("\\\\server\\share")),
    "value that looks like an expression": both("artist " + arg("(artist == 'x')")),
    "unknown type": "find foo bar\n",
    "unknown type in search": "search foo bar\n",
    "odd number of arguments": 'find artist "The Band" album\n',
    "one argument": "find artist\n",
    "no arguments": "find\nsearch\n",
    "type only, empty": 'find "" x\n',
    "sort as a type": 'find sort "The Band"\n',
    "MusicBrainz id": both("MUSICBRAINZ_ALBUMID " + mbid("album1")),
    "comment is a tag (hidden from output)": both('comment "First «song» — with a comment"'),
}, replies="auto")


# --- case folding: find is exact, search folds (ICU full case folding) ----------

test_case_folding = differential_table({
    "ß and ss": both('title "strasse"') + both('title "STRASSE"') + both('title "straße"'),
    "ẞ capital sharp s": both('title "STRAẞE"'),
    "weiß": both('artist "WEISS"') + both('artist "weiss"'),
    "dotted capital I": both('title "istanbul"') + both('title "İSTANBUL"')
                        + both('title "İstanbul"'),
    "dotless i": both('artist "ıi"') + both('artist "II"'),
    "final sigma": both('title "σίσυφοσ"') + both('title "ΣΊΣΥΦΟΣ"') + both('title "σίσυφος"'),
    "ligatures": both('title "final"') + both('title "FINAL FLIGHT"') + both('title "ﬁ"'),
    "ff ligature": both('artist "ff band"'),
    "fullwidth": both('artist "ｆｕｌｌ"') + both('artist "full"') + both('title "ＦＵＬＬ"'),
    "Kelvin sign": both('title "200 k"') + both('title "200 K"'),
    "NFD is not normalised": both('title "café"') + both(arg("title") + " " + arg("cafe\u0301")),
    "titlecase digraph": both('title "ǆungla"') + both('artist "Ǆ"'),
    "Greek and Cyrillic": both('title "ελληνικά"') + both('title "КИРИЛЛИЦА"'),
    "expression == folds but stays exact": f"search {fx('title', '==', 'strasse')}\n"
                                           f"search {fx('title', '==', 'stras')}\n"
                                           f"find {fx('title', '==', 'strasse')}\n",
    "expression contains folds": f"search {fx('title', 'contains', 'STRASS')}\n"
                                 f"find {fx('title', 'contains', 'STRASS')}\n",
    "expression != folds": f"count {fx('title', '!=', 'strasse')}\n"
                           f"search {fx('title', '!=', 'STRASSE')} window 0:2\n",
    "regex with folding": f"search {fx('title', '=~', '^STRA')}\nfind {fx('title', '=~', '^STRA')}\n",
    "file folds in search": both('file "case folding/straße"'),
    "base does not fold": both('base "case folding"'),
}, replies="auto")


# --- filter expressions ------------------------------------------------------------

test_expressions = differential_table({
    "==": both(fx("artist", "==", "The Band")),
    "== with double quotes": both(fx("artist", "==", "The Band", quote='"')),
    "tag name in upper case": both(fx("ARTIST", "==", "The Band")),
    "tag name mixed case": both(fx("aRtIsT", "==", "The Band")),
    "== empty: songs without the tag": f"count {fx('album', '==', '')}\n"
                                       f"find {fx('genre', '==', '')} window 0:5\n",
    "== empty title (present but empty)": both(fx("title", "==", "")),
    "!= empty: songs with the tag": f"count {fx('album', '!=', '')}\n",
    "!=": f"count {fx('artist', '!=', 'The Band')}\n",
    "!= matches songs without the tag": f"find {fx('artist', '!=', 'x')} window 0:3\n",
    "contains": both(fx("artist", "contains", "Band")),
    "CONTAINS upper case": both(fx("artist", "CONTAINS", "Band")),
    "!contains": f"count {fx('artist', '!contains', 'a')}\n"
                 f"find {fx('album', '!contains', 'e')} window 0:4\n",
    "contains empty": f"count {fx('artist', 'contains', '')}\n",
    "=~": both(fx("artist", "=~", "^The B")),
    "=~ unanchored": both(fx("title", "=~", "Pict")),
    "=~ case in find and search": both(fx("artist", "=~", "^the b")),
    "!~": f"count {fx('artist', '!~', '[a-z]')}\nfind {fx('title', '!~', '.')}\n",
    "=~ bad regex": both(fx("artist", "=~", "(")),
    "=~ empty regex": f"count {fx('artist', '=~', '')}\n",
    "=~ Unicode class": both(fx("title", "=~", "^\\p{Greek}")),
    "any ==": both(fx("any", "==", "Picture Person")),
    "any contains": f"count {fx('any', 'contains', 'Band')}\n",
    "any != (every value)": f"count {fx('any', '!=', 'Jazz')}\n",
    "file ==": both(fx("file", "==", "Old Tags/v1 only.mp3")),
    "file contains": both(fx("file", "contains", "v1")),
    "file =~": both(fx("file", "=~", "^Old.*only")),
    "filename ==": both(fx("filename", "==", "Old Tags/v1 only.mp3")),
    "FILE ==": both(fx("FILE", "==", "Old Tags/v1 only.mp3")),
    "file == empty": both(fx("file", "==", "")),
    "base": both(arg("(base 'Old Tags')")),
    "base with double quotes": both(arg('(base "Old Tags")')),
    "base of the quotes directory": both(arg(f"(base {fvalue(QDIR)})")),
    "base of a song": both(arg("(base 'Old Tags/v1 only.mp3')")),
    "base nonexistent": both(arg("(base 'nonexistent')")),
    "base trailing slash": both(arg("(base 'Old Tags/')")),
    "base empty": both(arg("(base '')")),
    "base slash": both(arg("(base '/')")),
    "base dot dot": both(arg("(base '../x')")),
    "base prefix is not a directory": both(arg("(base 'Old')")),
    "base through a symlink": both(arg("(base 'Links')")),
    "BASE": both(arg("(BASE 'Old Tags')")),
    "base without value": both(arg("(base)")),
    "fallback albumartist": both(fx("albumartist", "==", "The Band")),
    "fallback albumartistsort": both(fx("albumartistsort", "==", "The Band")),
    "fallback albumsort": both(fx("albumsort", "==", "Fallbacks")),
    "artistsort has no fallback here": both(fx("artistsort", "==", "The Band")),
    "multi-valued: any value matches": both(fx("artist", "==", "A2")),
    "multi-valued: != needs all": both(fx("genre", "!=", "Jazz") + " " + arg("(base 'Missing & Multi')")),
    "empty value inside a multi-valued tag": both(fx("artist", "==", "Multi")),
    "padded value": both(fx("artist", "==", "  Padded  ")) + both(fx("artist", "==", "Padded")),
    "value of 4095 bytes": both(fx("title", "==", "T" * 4095)),
    "value of 4096 bytes": both(fx("title", "==", "T" * 4096)),
    "artist of 4100 bytes": both(fx("artist", "==", "Ü" * 2050)),
    # Nesting.
    "nested AND": both(arg("((artist == 'Numbers') AND (track == '03'))")),
    "AND of three": both(arg("((artist == 'Numbers') AND (disc != 'x') AND (date contains '20'))")),
    "AND without spaces": both(arg("((artist == 'Numbers')AND(track == '03'))")),
    "one nested expression": both(arg("((artist == 'The Band'))")),
    "doubly nested": both(arg("(((artist == 'The Band')))")),
    "NOT": f"count {arg('(!(artist == ' + fvalue('The Band') + '))')}\n",
    "NOT NOT": both(arg("(!(!(artist == 'The Band')))")),
    "NOT inside AND": both(arg("((artist == 'Numbers') AND (!(track == '03')))")),
    "NOT with a space": both(arg("(! (artist == 'The Band'))")),
    "expression and legacy pair": both(fx("artist", "==", "Numbers") + ' track "03"'),
    "two expressions": both(fx("artist", "==", "Numbers") + " " + fx("track", "==", "x")),
    "whitespace inside": both(arg("(  artist   ==   'The Band'  )")),
    "no space around ==": both(arg("(artist=='The Band')")),
    "tab as whitespace": both(arg("(artist\t==\t'The Band')")),
    # The two escaping layers (protocol quoting, then the expression's own).
    "O'Brien escaped in double quotes": both('"(Artist == \\"O\\\\\'Brien\\")"'),
    "O'Brien escaped in single quotes": both('"(Artist == \'O\\\\\'Brien\')"'),
    "O'Brien inside double quotes needs no escape": both('"(Artist == \\"O\'Brien\\")"'),
    "quote characters": both(fx("artist", "==", 'Say "Hi"')) + both(fx("title", "==", '"quoted"', quote='"')),
    "backslash value": both(fx("title", "==", "C:\\Music\\")) + both(fx("artist", "==", "\\\\server\\share")),
    "backslash then quote": both(fx("title", "==", 'a\\"b')),
    "MALP double escaping": 'find "(album == \\"Back\\\\\\\\slash \\\\\\"Album\\\\\\"\\")"\n',
    "single layer only: backslash eaten": 'find "(title == \'C:\\Music\\\')"\n',
    "unknown escape keeps the letter": both(arg("(artist == 'The \\Band')")),
    "expression-like value": both(fx("artist", "==", "(artist == 'x')")),
    "parenthesis in the value": both(fx("title", "==", "(x) AND (y)")),
}, replies="auto")

# --- AudioFormat ----------------------------------------------------------------------

test_audioformat = differential_table({
    "== 44100:24:2": f"count {fx('AudioFormat', '==', '44100:24:2')}\n",
    "== 8000:24:1": f"count {fx('AudioFormat', '==', '8000:24:1')}\n",
    "== 22050:24:1": f"find {fx('AudioFormat', '==', '22050:24:1')} window 0:2\n",
    "== 44100:16:2 (no match)": both(fx("AudioFormat", "==", "44100:16:2")),
    "=~ rate wildcard": f"count {fx('AudioFormat', '=~', '*:24:1')}\n",
    "=~ all wildcards": f"count {fx('AudioFormat', '=~', '*:*:*')}\n",
    "=~ channels wildcard": f"count {fx('AudioFormat', '=~', '48000:24:*')}\n",
    "=~ without wildcard": f"count {fx('AudioFormat', '=~', '48000:24:2')}\n",
    "lower case name": f"count {fx('audioformat', '==', '8000:24:1')}\n",
    "float format": f"count {fx('AudioFormat', '==', '44100:f:2')}\n",
    "dsd format": f"count {fx('AudioFormat', '==', 'dsd64:2')}\n",
    "only a rate": both(fx("AudioFormat", "==", "44100")),
    "rate and bits": both(fx("AudioFormat", "==", "44100:16")),
    "bad rate": both(fx("AudioFormat", "==", "x:16:2")),
    "bad bits": both(fx("AudioFormat", "==", "44100:x:2")),
    "bad channels": both(fx("AudioFormat", "==", "44100:16:x")),
    "zero rate": both(fx("AudioFormat", "==", "0:16:2")),
    "too many channels": both(fx("AudioFormat", "==", "44100:16:9")),
    "empty": both(fx("AudioFormat", "==", "")),
    "wildcard in ==": both(fx("AudioFormat", "==", "*:*:*")),
    "!= is not allowed": both(fx("AudioFormat", "!=", "44100:24:2")),
    "contains is not allowed": both(fx("AudioFormat", "contains", "44100")),
    "legacy pair": both('AudioFormat "44100:24:2"'),
}, replies="auto")

# --- modified-since -------------------------------------------------------------------
# Song i of the library has mtime 1600000000 + i (2020-09-13T12:26:40Z + i s).

_MS = {
    "ISO with Z": "2020-09-13T12:27:50Z",
    "ISO without zone (UTC)": "2020-09-13T12:27:50",
    "ISO +00:00": "2020-09-13T12:27:50+00:00",
    "ISO +02:00": "2020-09-13T14:27:50+02:00",
    "ISO -0130": "2020-09-13T10:57:50-0130",
    "ISO +02": "2020-09-13T14:27:50+02",
    "basic format": "20200913T122750Z",
    "date only": "2020-09-13",
    "basic date": "20200913",
    "year and month": "2020-09",
    "hour only": "2020-09-13T12",
    "hour and minute": "2020-09-13T12:27",
    "basic hour and minute": "20200913T1227",
    "fractional seconds": "2020-09-13T12:27:50.5Z",
    "space instead of T": "2020-09-13 12:27:50",
    "lower-case t and z": "2020-09-13t12:27:50z",
    "year only": "2020",
    "unix time": "1600000070",
    "unix zero": "0",
    "unix negative": "-1",
    "unix huge": "99999999999",
    "unix with garbage": "1600000070x",
    "in the future": "2100-01-01T00:00:00Z",
    "empty": "",
    "word": "yesterday",
    "month 13": "2020-13-01",
    "day 32": "2020-01-32",
    "hour 25": "2020-09-13T25:00:00Z",
    "leading space": " 2020-09-13",
    "trailing space": "2020-09-13 ",
}

test_modified_since = differential_table({
    **{name: f"count {arg('(modified-since ' + fvalue(v) + ')')}\n" for name, v in _MS.items()},
    "songs, sorted": f"find {arg('(modified-since ' + fvalue('2020-09-13T12:27:55Z') + ')')} "
                     "sort Last-Modified window 0:3\n",
    "legacy pair": 'find modified-since "2020-09-13T12:27:58Z" sort -Last-Modified window 0:2\n',
    "legacy pair, bad": 'find modified-since "x"\n',
    "in search": f"search {arg('(modified-since ' + fvalue('2020-09-13T12:27:58Z') + ')')} "
                 "window 0:1\n",
    "upper case keyword": f"count {arg('(Modified-Since ' + fvalue('2020') + ')')}\n",
    "unquoted value": f"count {arg('(modified-since 2020)')}\n",
    "with AND": f"count {arg('((modified-since ' + fvalue('2020-09-13T12:27:00Z') + ') AND (base ' + fvalue('Numbers & Dates') + '))')}\n",
}, replies="auto")

# --- every filter error message -------------------------------------------------------

test_filter_errors = differential_table({
    "missing )": both(arg("(artist == 'x'")),
    "single =": both(arg("(artist = 'x')")),
    "unknown operator": both(arg("(artist <> 'x')")),
    "=== operator": both(arg("(artist === 'x')")),
    "unknown tag": both(arg("(foo == 'x')")),
    "unquoted value": both(arg("(artist == x)")),
    "unterminated quote": both(arg("(artist == 'x)")),
    "mismatched quotes": both(arg("(artist == 'x\")")),
    "value of 4096 bytes": both(fx("artist", "==", "x" * 4096)),
    "OR": both(arg("((artist == 'x') OR (artist == 'y'))")),
    "lower-case and": both(arg("((artist == 'x') and (artist == 'y'))")),
    "AND without second operand": both(arg("((artist == 'x') AND)")),
    "NOT without parentheses": both(arg("(!artist == 'x')")),
    "tag name missing": both(arg("( == 'x')")),
    "empty parentheses": both(arg("()")),
    "lone (": both(arg("(")),
    "tag only": both(arg("(artist)")),
    "operator without value": both(arg("(artist ==)")),
    "garbage after )": both(arg("(artist == 'x') y")),
    "garbage after ) without space": both(arg("(artist == 'x')y")),
    "contains without space": both(arg("(artist contains'x')")),
    "!contains without space": both(arg("(artist !contains'x')")),
    "contains followed by ==": both(arg("(artist contains == 'x')")),
    "0.24 starts_with": both(arg("(artist starts_with 'x')")),
    "0.24 eq_cs": both(arg("(artist eq_cs 'x')")),
    "0.24 added-since": both(arg("(added-since '2020')")),
    "0.24 prio": both(arg("(prio >= 1)")),
    "unquoted expression (protocol splits it)": "find (artist=='x')\n",
    "unquoted expression with spaces": "find (artist == 'x')\n",
    "expression missing its (": both(arg("artist == 'x')")),
    "tag name with digits": both(arg("(artist2 == 'x')")),
    "tag name with underscore": both(arg("(musicbrainz_trackid == 'x')")),
    "legacy unknown type": "find foo x\n",
    "legacy odd count": "find artist x album\n",
    "window before sort": 'find artist "The Band" window 0:1 sort title\n',
    "sort twice": 'find artist "The Band" sort title sort title\n',
    "window twice": 'find artist "The Band" window 0:1 window 0:1\n',
    "sort without tag": 'find artist "The Band" sort\n',
    "window without range": 'find artist "The Band" window\n',
    "only sort": "find sort title\n",
    "only window": "find window 0:1\n",
    "error in a command list": 'command_list_ok_begin\nfind artist "The Band" window 0:1\n'
                               + f"find {arg('(artist == x)')}\nping\ncommand_list_end\n",
}, replies="auto")

# --- sort -------------------------------------------------------------------------------

test_sort = differential_table({
    "no sort (database order)": f"find {ND}\n",
    "Track": f"find {ND} sort Track\n",
    "-Track": f"find {ND} sort -Track\n",
    "track lower case": f"find {ND} sort track\n",
    "Disc": f"find {ND} sort Disc\n",
    "-Disc": f"find {ND} sort -Disc\n",
    "Date": f"find {ND} sort Date\n",
    "-Date": f"find {ND} sort -Date\n",
    "Title": f"find {ND} sort Title\n",
    "Last-Modified": f"find {ND} sort Last-Modified\n",
    "-Last-Modified": f"find {ND} sort -Last-Modified\n",
    "last-modified lower case": f"find {ND} sort last-modified\n",
    "Artist (with missing values)": 'find base "Missing & Multi" sort Artist\n',
    "-Artist": 'find base "Missing & Multi" sort -Artist\n',
    "AlbumArtist falls back to Artist": 'find base "Missing & Multi" sort AlbumArtist\n',
    "AlbumArtistSort falls back": 'find base "Missing & Multi" sort AlbumArtistSort\n',
    "ArtistSort falls back": 'find base "Missing & Multi" sort ArtistSort\n',
    "AlbumSort falls back": 'find base "Missing & Multi" sort AlbumSort\n',
    "ArtistSort on Sort & Fallback": 'find base "Sort & Fallback" sort ArtistSort\n',
    "byte order, not collation": 'find base "Case Folding" sort Title\n',
    "Genre (multi-valued: first value)": 'find base "Missing & Multi" sort Genre\n',
    "Composer": 'find base "Missing & Multi" sort -Composer\n',
    "MUSICBRAINZ_TRACKID": "find base Compilations sort MUSICBRAINZ_TRACKID\n",
    "stable: equal keys keep database order": "find base Compilations sort Album\n",
    "in search": 'search base "Case Folding" sort -Title\n',
    "unknown sort tag": f"find {ND} sort bogus\n",
    "unknown -tag": f"find {ND} sort -bogus\n",
    "sort by file": f"find {ND} sort file\n",
    "sort by any": f"find {ND} sort any\n",
    "sort by empty": f'find {ND} sort ""\n',
    "sort by lone -": f"find {ND} sort -\n",
    "sort by --Track": f"find {ND} sort --Track\n",
    "sort by Added (0.24)": f"find {ND} sort Added\n",
    "sort by prio (0.24)": f"find {ND} sort prio\n",
    "quoted keyword": f'find {ND} "sort" "Track"\n',
    "upper-case SORT keyword": f"find {ND} SORT Track\n",
    "whole library by -Last-Modified, first 5 (recently added)":
        'search file "" sort -Last-Modified window 0:5\n',
    "whole library by Title": "search any \"\" sort Title window 0:20\n",
}, replies="auto")

# --- window -----------------------------------------------------------------------------

test_window = differential_table({
    "0:0": f"find {ND} window 0:0\n",
    "0:1": f"find {ND} window 0:1\n",
    "1:3": f"find {ND} window 1:3\n",
    "open end": f"find {ND} window 7:\n",
    "single number": f"find {ND} window 2\n",
    "end beyond the matches": f"find {ND} window 5:100\n",
    "start at the end": f"find {ND} window 10:20\n",
    "start beyond the end": f"find {ND} window 100:200\n",
    "start beyond, open": f"find {ND} window 100:\n",
    "start == end": f"find {ND} window 3:3\n",
    "start > end": f"find {ND} window 3:2\n",
    "-1": f"find {ND} window -1\n",
    "negative start": f"find {ND} window -2:3\n",
    "negative end": f"find {ND} window 0:-1\n",
    "only colon": f"find {ND} window :\n",
    "no start": f"find {ND} window :3\n",
    "not a number": f"find {ND} window x\n",
    "empty": f'find {ND} window ""\n',
    "huge": f"find {ND} window 0:99999999999\n",
    "2^32": f"find {ND} window 4294967296:\n",
    "with sort": f"find {ND} sort Track window 2:5\n",
    "with -sort": f"find {ND} sort -Date window 0:3\n",
    "in search": 'search title "track" window 1:2\n',
    "on the whole library": "search file \"\" window 1990:2010\n",
    "quoted keyword": f'find {ND} "window" "0:2"\n',
}, replies="auto")


# --- findadd / searchadd / searchaddpl (queue and stored playlists; each case cleans up) --

test_add_from_database = differential_table({
    "findadd": 'findadd artist "The Band"\nplaylistinfo\nclear\n',
    "findadd is case-sensitive": 'findadd artist "the band"\nplaylist\nclear\n',
    "searchadd folds case": 'searchadd artist "the band"\nplaylist\nclear\n',
    "searchadd with sort and window": f"searchadd {ND} sort -Track window 1:4\nplaylist\nclear\n",
    "findadd with position": f'findadd artist "The Band"\nfindadd {ND} window 0:2 position 1\n'
                             "playlist\nclear\n",
    "searchadd with relative position, no current song":
        'searchadd title "track" position +0\nplaylist\nclear\n',
    "position before sort is an error": f"findadd {ND} position 0 sort Track\nplaylist\nclear\n",
    "position out of range": f"findadd {ND} position 5\nplaylist\nclear\n",
    "position not a number": f"findadd {ND} position x\nclear\n",
    "findadd with an expression": f"findadd {fx('album', '==', 'Numbers')}\nplaylistlength\n"
                                  "status\nclear\n",
    "findadd, no match": 'findadd artist "nobody"\nplaylist\nclear\n',
    "findadd filter error": f"findadd {arg('(artist == x)')}\nclear\n",
    "findadd without filter": "findadd\nclear\n",
    "searchaddpl": 'searchaddpl "conformance tmp" artist "the band"\n'
                   'listplaylist "conformance tmp"\nrm "conformance tmp"\n',
    "searchaddpl twice appends": f'searchaddpl "conformance tmp" {ND} window 0:1\n'
                                 f'searchaddpl "conformance tmp" {ND} window 1:2\n'
                                 'listplaylist "conformance tmp"\nrm "conformance tmp"\n',
    "searchaddpl bad name": 'searchaddpl "a/b" artist "x"\n',
    "searchaddpl without filter": 'searchaddpl "conformance tmp"\n',
}, replies="auto", queue=True)     # ids and versions relative to each case (the queue is shared)
