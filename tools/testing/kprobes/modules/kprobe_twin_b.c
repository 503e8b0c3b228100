// SPDX-License-Identifier: GPL-2.0
#define TWIN 2
#include "kprobe_twin.c"
