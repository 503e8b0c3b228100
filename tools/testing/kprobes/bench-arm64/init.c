// SPDX-License-Identifier: GPL-2.0
/*
 * /init of make bench-arm64's guest (static, aarch64): load
 * /kprobe_bench_arm64.ko, whose init prints the results on the console,
 * with the parameters of the kpb_args= boot option (which the kernel
 * hands to init in its environment), then power off.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/syscall.h>

static void say(const char *msg)
{
	int fd = open("/dev/kmsg", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, msg, strlen(msg)) < 0)
			perror("kmsg");
		close(fd);
	}
}

int main(void)
{
	const char *args = getenv("kpb_args");
	char msg[256];
	int fd;

	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	fd = open("/kprobe_bench_arm64.ko", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, args ? args : "", 0)) {
		snprintf(msg, sizeof(msg), "KPB-INIT module not loaded: %s\n",
			 strerror(errno));
		say(msg);
	} else {
		say("KPB-INIT module loaded\n");
	}
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
