#pragma once
#include <vorbis/codec.h>
#include <vorbis/vorbisenc.h>
