// SPDX-License-Identifier: GPL-2.0
#define TWIN 1
#include "kprobe_twin.c"
