#pragma once
#include <dbus/dbus.h>

// libdbus's type codes are casts of character literals, which Swift does not import as constants.
static const int fermata_dbus_type_invalid = DBUS_TYPE_INVALID;
static const int fermata_dbus_type_byte = DBUS_TYPE_BYTE;
static const int fermata_dbus_type_string = DBUS_TYPE_STRING;
static const int fermata_dbus_type_object_path = DBUS_TYPE_OBJECT_PATH;
static const int fermata_dbus_type_array = DBUS_TYPE_ARRAY;
static const int fermata_dbus_type_variant = DBUS_TYPE_VARIANT;
static const int fermata_dbus_type_dict_entry = DBUS_TYPE_DICT_ENTRY;
