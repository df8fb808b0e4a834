/* A crash handled the way CPython's faulthandler handles it: the handler runs
 * on a small alternate signal stack (SA_ONSTACK), with SA_NODEFER; it writes
 * its report, puts the default disposition back and raises the signal again,
 * still on that stack, where memplan's fatal-signal hook then runs too. The
 * stack holds the two signal frames the kernel pushes there and 4 KiB more,
 * with an unmapped page under it: a handler that needs more dies there
 * (faulthandler's stack is a heap block: what overflowed it corrupted the
 * heap). Prints a checksum of what it allocated first, then crashes with
 * SIGSEGV. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

static void on_segv(int sig)
{
	static const char report[] = "altstack_crash: fatal signal, as reported by the program\n";

	if (write(STDERR_FILENO, report, sizeof(report) - 1) < 0)
		_exit(2);
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(void)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t frame = getauxval(AT_MINSIGSTKSZ), bytes;
	struct sigaction act = {.sa_handler = on_segv, .sa_flags = SA_NODEFER | SA_ONSTACK};
	char *keep[64] = {0}, *map;
	uint64_t sum = 0;
	stack_t alt;

	for (int i = 0; i < 20000; i++) {
		int k = i % 64;
		free(keep[k]);
		keep[k] = malloc(16 + (size_t)(i * 37) % 700);
		if (!keep[k])
			return 1;
		memset(keep[k], i, 16);
		sum += (unsigned char)keep[k][7];
	}
	printf("%llu\n", (unsigned long long)sum);
	fflush(stdout);
	bytes = ((2 * (frame ? frame : 2048) + 4096) + page - 1) / page * page;
	map = mmap(NULL, page + bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || mprotect(map, page, PROT_NONE) != 0)
		return 1;
	alt = (stack_t){.ss_sp = map + page, .ss_size = bytes};
	if (sigaltstack(&alt, NULL) != 0)
		return 1;
	sigemptyset(&act.sa_mask);
	if (sigaction(SIGSEGV, &act, NULL) != 0)
		return 1;
	*(volatile int *)(uintptr_t)8 = 1;
	return 0;
}
