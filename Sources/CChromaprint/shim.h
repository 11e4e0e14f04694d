#pragma once
#include <chromaprint.h>
