#!/usr/bin/python3
"""A stand-in for UDisks2 on a private D-Bus bus, for conformance/test_udisks.py (python3-dbus, python3-gi).

It owns org.freedesktop.UDisks2 on the system bus that DBUS_SYSTEM_BUS_ADDRESS names (the test's own
dbus-daemon, never the machine's) and exports /org/freedesktop/UDisks2 with org.freedesktop.DBus.ObjectManager's
GetManagedObjects: one block device, its `Id` given, with the org.freedesktop.UDisks2.Filesystem interface, whose
Mount returns the directory given (or fails with the message given) and whose Unmount forgets it; with
--mounted, MountPoints already names the directory. Each call is appended to --log as one line (method and path).
It writes --ready once its name is owned, and exits on SIGTERM."""

from __future__ import annotations

import argparse
import signal
import sys

import dbus
import dbus.exceptions
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

ROOT = "/org/freedesktop/UDisks2"
DEVICE = ROOT + "/block_devices/fake1"
FILESYSTEM = "org.freedesktop.UDisks2.Filesystem"


class UDisks(dbus.service.Object):
    def __init__(self, bus, options):
        super().__init__(bus, ROOT)
        self.options = options
        self.mounted = options.mounted

    def record(self, line: str) -> None:
        with open(self.options.log, "a") as log:
            log.write(line + "\n")

    def properties(self):
        points = [dbus.ByteArray(self.options.directory.encode() + b"\0")] if self.mounted else []
        return {
            "org.freedesktop.UDisks2.Block": {"Id": dbus.String(self.options.id),
                                              "Device": dbus.ByteArray(b"/dev/fake1\0")},
            FILESYSTEM: {"MountPoints": dbus.Array(points, signature="ay")},
        }

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        self.record("GetManagedObjects " + ROOT)
        return {dbus.ObjectPath(DEVICE): self.properties()}


class Device(dbus.service.Object):
    def __init__(self, bus, manager: UDisks):
        super().__init__(bus, DEVICE)
        self.manager = manager

    @dbus.service.method(FILESYSTEM, in_signature="a{sv}", out_signature="s")
    def Mount(self, options):
        self.manager.record(f"Mount {DEVICE} {len(options)}")
        if self.manager.options.fail_mount:
            raise dbus.exceptions.DBusException(self.manager.options.fail_mount,
                                                name="org.freedesktop.UDisks2.Error.Failed")
        if self.manager.mounted:
            raise dbus.exceptions.DBusException(
                f"Device /dev/fake1 is already mounted at `{self.manager.options.directory}'.",
                name="org.freedesktop.UDisks2.Error.AlreadyMounted")
        self.manager.mounted = True
        return self.manager.options.directory

    @dbus.service.method(FILESYSTEM, in_signature="a{sv}")
    def Unmount(self, options):
        self.manager.record(f"Unmount {DEVICE} {len(options)}")
        if not self.manager.mounted:
            raise dbus.exceptions.DBusException("Device `/dev/fake1' is not mounted",
                                                name="org.freedesktop.UDisks2.Error.NotMounted")
        self.manager.mounted = False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--id", required=True)
    parser.add_argument("--directory", required=True)
    parser.add_argument("--mounted", action="store_true")
    parser.add_argument("--fail-mount", default="")
    parser.add_argument("--log", required=True)
    parser.add_argument("--ready", required=True)
    options = parser.parse_args()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    manager = UDisks(bus, options)
    Device(bus, manager)
    name = dbus.service.BusName("org.freedesktop.UDisks2", bus)
    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    with open(options.ready, "w") as ready:
        ready.write("ready\n")
    loop.run()
    del name
    return 0


if __name__ == "__main__":
    sys.exit(main())
