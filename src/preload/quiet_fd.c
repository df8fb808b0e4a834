/* Descriptors kept out of the program's way, see quiet_fd.h. */
#define _GNU_SOURCE
#include "quiet_fd.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

/* Below the top of the range the program can use, or of the usual 1024 if its
 * limit is higher (a higher number would make the kernel's table of descriptors
 * bigger for nothing): a few numbers are left free above memplan's, and
 * programs that pick a high number themselves (bash keeps its script at 255)
 * search upwards from theirs. */
#define QUIET_FD_TOP	  1024
#define QUIET_FD_HEADROOM 16

int quiet_fd(int fd)
{
	struct rlimit limit;
	rlim_t top = QUIET_FD_TOP;

	if (fd < 0)
		return fd;
	if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < top)
		top = limit.rlim_cur;
	if (top <= 2 * QUIET_FD_HEADROOM || fd >= (int)(top - QUIET_FD_HEADROOM))
		return fd;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - QUIET_FD_HEADROOM));
	if (high < 0)
		return fd;
	close(fd);
	return high;
}
