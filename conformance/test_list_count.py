"""Differential cases: list and count (protocol §2.9; clients.md pitfalls 2, 6, 7, 28, 30)."""

from mpdtest import arg, differential_table, fx

#: 0.23.12's tags, in `tagtypes` order (protocol §4.1).
TAGS = ["Artist", "ArtistSort", "Album", "AlbumSort", "AlbumArtist", "AlbumArtistSort",
        "Title", "Track", "Name", "Genre", "Date", "OriginalDate", "Composer",
        "ComposerSort", "Performer", "Conductor", "Work", "Movement", "MovementNumber",
        "Ensemble", "Location", "Grouping", "Comment", "Disc", "Label",
        "MUSICBRAINZ_ARTISTID", "MUSICBRAINZ_ALBUMID", "MUSICBRAINZ_ALBUMARTISTID",
        "MUSICBRAINZ_TRACKID", "MUSICBRAINZ_RELEASETRACKID", "MUSICBRAINZ_WORKID"]


def spellings(tag: str) -> str:
    """`list` with the canonical, lower-case, quoted lower-case and upper-case name."""
    return (f"list {tag}\nlist {tag.lower()}\nlist {arg(tag.lower())}\n"
            f"list {tag.upper()}\n")


# Every tag in four spellings; the reply always uses the canonical name.
test_list_every_tag = differential_table({tag: spellings(tag) for tag in TAGS},
                                         replies="auto")

test_list = differential_table({
    # What `list` accepts as its type.
    "file": "list file\n",
    "File": "list File\n",
    "filename": "list filename\n",
    "any": "list any\n",
    "base": "list base\n",
    "Last-Modified": "list Last-Modified\n",
    "AudioFormat": "list AudioFormat\n",
    "unknown type": "list bogus\n",
    "empty type": 'list ""\n',
    "no type": "list\n",
    "mixed case with digits": "list musicbrainz_TrackId\n",
    # Filters.
    "album of an artist (pair)": 'list album artist "The Band"\n',
    "legacy: album ARTIST": 'list album "The Band"\n',
    "legacy, quoted type (MPDroid)": 'list "album" "The Band"\n',
    "legacy, upper-case type": 'list ALBUM "The Band"\n',
    "legacy with an empty artist": 'list album ""\n',
    "legacy with an artist without albums": 'list album "Missing Album"\n',
    "legacy with a Unicode artist": f"list album {arg('Ångström & Co')}\n",
    "legacy form for another type": 'list artist "The Band"\n',
    "legacy form for title": 'list title "The Band"\n',
    "expression is not the legacy form": f"list album {fx('artist', '==', 'The Band')}\n",
    "legacy value starting with (": f"list album {arg('(artist')}\n",
    "filter by genre": 'list album genre "Jazz"\n',
    "filter on the listed tag": 'list genre genre "Jazz"\n',
    "filter with two pairs": 'list title artist "Numbers" album "Numbers"\n',
    "expression filter": f"list title {fx('album', '==', 'Numbers')}\n",
    "filter is case-sensitive": 'list album artist "the band"\n',
    "filter with fallback": 'list album albumartist "The Band"\n',
    "filter without the tag": 'list title album ""\n',
    "filter: empty artist": 'list album artist ""\n',
    "filter: base": 'list title base "Case Folding"\n',
    "filter: modified-since": "list album " + arg("(modified-since '2020-09-13T12:27:55Z')") + "\n",
    "filter error": f"list album {arg('(artist == x)')}\n",
    "odd filter arguments": 'list album artist "The Band" album\n',
    "list file with a filter": 'list file artist "The Band"\n',
    "list file with base": 'list file base "Old Tags"\n',
    # Values: byte order, empties, fallbacks, multi-values.
    "albumartist falls back to artist": "list albumartist\n",
    "albumartistsort falls back": "list albumartistsort\n",
    "artistsort falls back": "list artistsort\n",
    "albumsort falls back": "list albumsort\n",
    "multi-valued genre": 'list genre base "Missing & Multi"\n',
    "title: long and empty values": 'list title base "Missing & Multi"\n',
    "track values": 'list track base "Numbers & Dates"\n',
    "disc values": 'list disc base "Numbers & Dates"\n',
    "date values": 'list date base "Numbers & Dates"\n',
    "case folding values are distinct": 'list title base "Case Folding"\n',
    "canonically equivalent values are distinct": 'list artist base "Case Folding" group title\n',
    "canonically equivalent values counted apart": 'count base "Case Folding" group artist\n',
    "window is 0.25": "list album window 0:2\n",
    "sort is not for list": "list album sort album\n",
    "in a command list": "command_list_ok_begin\nlist genre\nlist bogus\ncommand_list_end\n",
}, replies="auto")

test_list_group = differential_table({
    "album group albumartist": "list album group albumartist\n",
    "album group AlbumArtist (spelling)": "list album group AlbumArtist\n",
    "album group artist": "list album group artist\n",
    "album group date": "list album group date\n",
    "two groups: last is outermost": "list album group albumartist group date\n",
    "two groups, other order": "list album group date group albumartist\n",
    "three groups": "list title group album group artist group genre\n",
    "three groups on a subtree": 'list title base "Missing & Multi" group album group artist '
                                 "group genre\n",
    "group with a filter": 'list album artist "Numbers" group date\n',
    "group with an expression": f"list title {fx('album', '==', 'Numbers')} group track\n",
    "group with empty values": 'list title base "Missing & Multi" group albumartist\n',
    "group by albumartistsort (MALP)": "list album group albumartistsort\n",
    "group by a sort tag": "list artist group artistsort\n",
    "group by multi-valued genre": 'list title base "Missing & Multi" group genre\n',
    "quoted keywords (MPDroid)": 'list "album" "group" "albumartist"\n',
    "legacy filter and group": 'list album "The Band" group date\n',
    "list file group artist": 'list file base "Old Tags" group artist\n',
    "group by the listed tag": "list album group album\n",
    "group by the listed tag, other case": "list album group ALBUM\n",
    "same group twice": "list album group artist group artist\n",
    "group by unknown tag": "list album group bogus\n",
    "group without tag": "list album group\n",
    "group by file": "list album group file\n",
    "group by any": "list album group any\n",
    "upper-case GROUP keyword": "list album GROUP artist\n",
    "group before filter": 'list album group artist artist "The Band"\n',
    "many groups": "list title group album group artist group genre group date "
                   "group disc group track\n",
    "MPDroid without group support": 'list "album" "group" "artist"\n',
}, replies="auto")

test_count = differential_table({
    "pair": 'count artist "The Band"\n',
    "expression": f"count {fx('genre', '==', 'Jazz')}\n",
    "nested expression": "count " + arg("((genre == 'Jazz') AND (date contains '19'))") + "\n",
    "no match": 'count artist "nobody"\n',
    "case-sensitive": 'count artist "the band"\n',
    "empty value": 'count album ""\n',
    "any": 'count any "Jazz"\n',
    "file": 'count file "Old Tags/v1 only.mp3"\n',
    "base": 'count base "Generated"\n',
    "base of everything": "count " + arg("(base '')") + "\n",
    "every song": f"count {fx('file', '=~', '')}\n",
    "no arguments": "count\n",
    "odd arguments": "count artist\n",
    "unknown filter type": "count foo bar\n",
    "filter error": f"count {arg('(artist == x)')}\n",
    # group
    "group artist (no filter)": "count group artist\n",
    "group albumartist": "count group albumartist\n",
    "group album": "count group album\n",
    "group date": "count group date\n",
    "group genre (multi-valued)": "count group genre\n",
    "group track": 'count base "Numbers & Dates" group track\n',
    "group with a filter": 'count genre "Jazz" group album\n',
    "group with an expression": f"count {fx('album', '==', 'Numbers')} group disc\n",
    "group title with empty values": 'count base "Missing & Multi" group title\n',
    "group Artist (spelling)": "count group Artist\n",
    "group ARTIST": "count group ARTIST\n",
    "group unknown tag": "count group bogus\n",
    "group file": "count group file\n",
    "group without tag": "count group\n",
    "group twice": "count group artist group album\n",
    "upper-case GROUP keyword": "count GROUP artist\n",
    "quoted keywords": 'count "group" "artist"\n',
    "count with sort": 'count artist "The Band" sort title\n',
    "count with window": 'count artist "The Band" window 0:1\n',
    "in a command list": 'command_list_ok_begin\ncount artist "The Band"\ncount group bogus\n'
                         "command_list_end\n",
}, replies="auto")
