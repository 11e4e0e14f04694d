#pragma once
#include <id3tag.h>
