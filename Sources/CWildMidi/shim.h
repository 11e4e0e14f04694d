#pragma once
#include <wildmidi_lib.h>
