"""Differential cases: idle / noidle, alone and woken by other connections.

Multi-connection cases name their connections ("a", "b"); the harness waits
until the servers are quiet after each step, so a wake-up shows under the step
that caused it.
"""

from mpdtest import case, differential_table

test_idle_single_connection = differential_table({
    "idle then noidle": ["idle\n", "noidle\n"],
    "idle and noidle in one write": case("idle\nnoidle\n", replies=1),
    "idle with trailing space (gompd)": ["idle \n", "noidle\n"],
    "idle one subsystem": ["idle database\n", "noidle\n"],
    "idle every subsystem": ["idle database update stored_playlist playlist player mixer output "
                             "options partition sticker subscription message neighbor mount\n",
                             "noidle\n"],
    "idle subsystem names are case-insensitive": ["idle DATABASE Stored_Playlist\n", "noidle\n"],
    "idle quoted subsystem": ['idle "player"\n', "noidle\n"],
    "idle unknown subsystem": case("idle foo\n", replies=1),
    "idle known then unknown": case("idle database foo\n", replies=1),
    "idle unknown then ping": case("idle foo\nping\n", replies=2),
    "noidle outside idle: no reply": case("noidle\nping\n", replies=1),
    "noidle twice after idle": ["idle\n", "noidle\n", "noidle\nping\n"],
    "noidle with trailing whitespace": ["idle\n", "noidle \r\n"],
    "noidle with an argument while idle (closes)": ["idle\n", "noidle x\n"],
    "command during idle (closes)": ["idle\n", "ping\n"],
    "idle during idle (closes)": ["idle\n", "idle\n"],
    "bad line during idle (closes)": ["idle\n", "Ping\n"],
    "pipelined after idle (closes)": "idle\nping\n",
    "idle waits quietly": "idle\n",
    "own subscribe is a pending event": ["subscribe c\n", "idle\n", "noidle\n"],
    "pending event, idle on another subsystem": ["subscribe c\n", "idle player\n", "noidle\n"],
    "pending event reported once": ["subscribe c\n", "idle\n", "idle\n", "noidle\n"],
    "idle inside a command list (0.23 quirk)": ["command_list_ok_begin\nping\nidle\nping\n"
                                                "command_list_end\n", "noidle\n"],
})

test_idle_woken_by_others = differential_table({
    "subscribe wakes idle subscription": [
        ("a", "idle subscription\n"), ("b", "subscribe x\n"), ("a", "noidle\n")],
    "subscribe wakes plain idle": [
        ("a", "idle\n"), ("b", "subscribe x\n")],
    "unsubscribe wakes idle": [
        ("b", "subscribe x\n"), ("a", "idle\n"), ("b", "unsubscribe x\n")],
    "subscribe does not wake idle player": [
        ("a", "idle player\n"), ("b", "subscribe x\n"), ("a", "noidle\n")],
    "sendmessage wakes idle message": [
        ("a", "subscribe c\n"), ("a", "idle message\n"), ("b", 'sendmessage c "hi there"\n'),
        ("a", "readmessages\nreadmessages\n")],
    "sendmessage to another channel does not wake": [
        ("a", "subscribe c\n"), ("b", "subscribe d\n"), ("a", "idle message\n"),
        ("a", "noidle\n"), ("b", "sendmessage d hi\n"), ("a", "idle message\n"),
        ("a", "noidle\n")],
    "second message while pending does not re-raise": [
        ("a", "subscribe c\n"), ("b", "sendmessage c one\n"), ("a", "idle message\n"),
        ("b", "sendmessage c two\n"), ("a", "idle message\n"), ("a", "noidle\n"),
        ("a", "readmessages\n")],
    "events pile up while not idling": [
        ("a", "ping\n"), ("b", "subscribe c\n"), ("b", "sendmessage c hi\n"),
        ("a", "subscribe c\n"), ("b", "sendmessage c hi\n"), ("a", "idle\n")],
    "one wake-up, several subsystems": [
        ("a", "subscribe c\n"), ("b", "sendmessage c hi\nsubscribe d\n"),
        ("a", "idle message subscription\n")],
    # 0.23 clears the client's whole pending mask when an idle fires, so the
    # pending "subscription" is lost by an "idle message".
    "0.23 quirk: idle clears unsubscribed pending events": [
        ("b", "subscribe d\n"), ("a", "subscribe c\n"), ("b", "sendmessage c hi\n"),
        ("a", "idle message\n"), ("a", "idle subscription\n"), ("a", "noidle\n")],
    "two idlers woken together": [
        ("a", "idle subscription\n"), ("b", "idle\n"), ("c", "subscribe x\n"),
        ("a", "noidle\n"), ("b", "noidle\n")],
    # Only subscribe/unsubscribe raise "subscription"; a subscriber hanging up does not.
    "a subscriber closing does not wake idle": [
        ("b", "subscribe x\n"), ("a", "idle subscription\n"), ("b", "close\n"), ("a", "noidle\n")],
    "idler that closed is not an error": [
        ("a", "idle\n"), ("a", "ping\n"), ("b", "subscribe x\nping\n")],
})
