/* The bundled example: a toy inference loop. Each step runs a fixed sequence of
 * layers; every layer allocates its output buffer (256 KiB to 4 MiB), reads the
 * previous one, and frees inputs that are no longer needed, while a tokenizer and
 * a small cache allocate many small objects from other call sites. Memory use
 * peaks at a known point, which `memplan show` names. Deterministic; prints a
 * checksum. usage: demo_layers [STEPS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAYERS 12

struct token {
	char text[24];
	struct token *next;
};

static __attribute__((noinline)) float *layer_output(size_t floats)
{
	return malloc(floats * sizeof(float));
}

static __attribute__((noinline)) struct token *tokenize(unsigned step, unsigned n)
{
	struct token *head = NULL;

	for (unsigned i = 0; i < n; i++) {
		struct token *t = malloc(sizeof(*t));
		snprintf(t->text, sizeof(t->text), "tok%u_%u", step, i);
		t->next = head;
		head = t;
	}
	return head;
}

static __attribute__((noinline)) char *cache_entry(const char *key)
{
	size_t n = strlen(key) + 1;
	char *s = malloc(n);
	memcpy(s, key, n);
	return s;
}

int main(int argc, char **argv)
{
	unsigned steps = argc > 1 ? (unsigned)atoi(argv[1]) : 20;
	static const unsigned kib[LAYERS] = {1024, 4096, 2048, 4096, 1024, 512,
					     2048, 4096, 1024, 256,  512,  256};
	char *cache[64] = {0};
	double checksum = 0;

	for (unsigned step = 0; step < steps; step++) {
		float *out[LAYERS];
		struct token *tokens = tokenize(step, 200);

		for (unsigned l = 0; l < LAYERS; l++) {
			size_t n = (size_t)kib[l] * 1024 / sizeof(float);
			out[l] = layer_output(n);
			for (size_t i = 0; i < n; i += 64)
				out[l][i] =
				    (float)(l + 1) *
				    (l ? out[l - 1][i % ((size_t)kib[l - 1] * 256)] + 1 : 1);
			/* A skip connection keeps layer l-3 alive until here. */
			if (l >= 3) {
				free(out[l - 3]);
				out[l - 3] = NULL;
			}
		}
		for (unsigned l = 0; l < LAYERS; l++) {
			if (out[l])
				checksum += out[l][0];
			free(out[l]);
		}
		for (struct token *t = tokens, *next; t; t = next) {
			next = t->next;
			free(t);
		}
		char key[32];
		snprintf(key, sizeof(key), "result-%u", step);
		free(cache[step % 64]);
		cache[step % 64] = cache_entry(key);
	}
	for (unsigned i = 0; i < 64; i++)
		free(cache[i]);
	printf("demo_layers: %u steps, checksum %.0f\n", steps, checksum);
	return 0;
}
