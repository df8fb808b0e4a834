/* Read-modify-writes on shared words that skip the bus lock while the process
 * has a single thread, as glibc's own malloc does.
 *
 * glibc clears __libc_single_threaded in pthread_create before the new thread
 * exists (and the clone that starts it orders the creator's earlier stores
 * before anything the new thread does). While it is set, no other thread can
 * touch the word, so a plain load and store is the whole read-modify-write, and
 * program order is a single total order of them: every argument made for
 * seq_cst atomics holds. Once it is clear, these are the seq_cst operations.
 *
 * What this gives up: a signal handler that updates the same word between the
 * load and the store of an operation it interrupted has its update undone
 * (arena.h, point 5, says what that can and cannot do to the arena's check;
 * allocating in a signal handler is undefined in POSIX and unsafe in glibc too);
 * and threads made without pthread_create (a raw clone), which glibc does not
 * see either, so its own malloc is unsafe for them as well. */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/single_threaded.h>

static inline bool lone_thread(void)
{
	return __builtin_expect(__libc_single_threaded, 1);
}

/* atomic_compare_exchange_weak: on failure *expected gets the value seen. */
static inline bool lone_cas(_Atomic uint64_t *word, uint64_t *expected, uint64_t desired)
{
	if (lone_thread()) {
		uint64_t seen = atomic_load_explicit(word, memory_order_relaxed);
		if (seen != *expected) {
			*expected = seen;
			return false;
		}
		atomic_store_explicit(word, desired, memory_order_relaxed);
		return true;
	}
	return atomic_compare_exchange_weak(word, expected, desired);
}

static inline uint64_t lone_fetch_or(_Atomic uint64_t *word, uint64_t bits)
{
	if (lone_thread()) {
		uint64_t old = atomic_load_explicit(word, memory_order_relaxed);
		atomic_store_explicit(word, old | bits, memory_order_relaxed);
		return old;
	}
	return atomic_fetch_or(word, bits);
}

static inline uint64_t lone_fetch_and(_Atomic uint64_t *word, uint64_t bits)
{
	if (lone_thread()) {
		uint64_t old = atomic_load_explicit(word, memory_order_relaxed);
		atomic_store_explicit(word, old & bits, memory_order_relaxed);
		return old;
	}
	return atomic_fetch_and(word, bits);
}

/* Clears bit n of *word; returns whether it was set. With threads, one
 * `lock btr` (GCC matches this form), where lone_fetch_and with its result
 * used is a compare-and-swap loop. */
static inline bool lone_test_and_clear(_Atomic uint64_t *word, unsigned n)
{
	const uint64_t bit = UINT64_C(1) << n;

	if (lone_thread()) {
		uint64_t old = atomic_load_explicit(word, memory_order_relaxed);
		atomic_store_explicit(word, old & ~bit, memory_order_relaxed);
		return old & bit;
	}
	return atomic_fetch_and(word, ~bit) & bit;
}

/* Sets bit n of *word; returns whether it was set already. With threads, one
 * `lock bts`. */
static inline bool lone_test_and_set(_Atomic uint64_t *word, unsigned n)
{
	const uint64_t bit = UINT64_C(1) << n;

	if (lone_thread()) {
		uint64_t old = atomic_load_explicit(word, memory_order_relaxed);
		atomic_store_explicit(word, old | bit, memory_order_relaxed);
		return old & bit;
	}
	return atomic_fetch_or(word, bit) & bit;
}

static inline uint32_t lone_fetch_add32(_Atomic uint32_t *word, uint32_t n)
{
	if (lone_thread()) {
		uint32_t old = atomic_load_explicit(word, memory_order_relaxed);
		atomic_store_explicit(word, old + n, memory_order_relaxed);
		return old;
	}
	return atomic_fetch_add(word, n);
}

/* Takes mutex unless the process has one thread; returns whether it did, for
 * lone_unlock. For a lock that only keeps threads apart: with one thread there is
 * nothing to keep apart (a signal handler on this thread must keep out by other
 * means, as memplan's do while the guard is set). */
static inline bool lone_lock(pthread_mutex_t *mutex)
{
	if (lone_thread())
		return false;
	pthread_mutex_lock(mutex);
	return true;
}

static inline void lone_unlock(pthread_mutex_t *mutex, bool held)
{
	if (held)
		pthread_mutex_unlock(mutex);
}
