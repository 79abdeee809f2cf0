/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the libFuzzer targets: an assertion that names the invariant,
 * a reader over the fuzz input, and the checks every refusal must pass.
 */
#ifndef VAAI_FUZZ_H
#define VAAI_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#include "vaai_parse.h"

#define FUZZ_ASSERT(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: invariant broken: %s\n", \
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/* Consumes the fuzz input front to back; zeros once it runs out. */
struct fuzz_in {
	const u8 *p;
	size_t n;
};

static inline u64 fuzz_take(struct fuzz_in *in, unsigned int bytes)
{
	u64 v = 0;

	while (bytes--) {
		v = v << 8 | (in->n ? *in->p : 0);
		if (in->n) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

/* Sense built for f must be well formed and stay inside its buffer. */
void fuzz_check_sense(const struct vaai_fault *f);
/* A refusal of a parameter list of len bytes: sane sense, pointer inside. */
void fuzz_check_list_fault(const struct vaai_fault *f, u32 len);

#endif /* VAAI_FUZZ_H */
