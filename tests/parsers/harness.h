/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal unit-test harness: TEST(name) { CHECK(...); } registers a test,
 * main.c runs them all and prints "N passed, N failed".
 */
#ifndef VAAI_TEST_HARNESS_H
#define VAAI_TEST_HARNESS_H

#include "vaai_parse.h"

struct vaai_test {
	const char *name;
	void (*fn)(void);
	struct vaai_test *next;
};

void vaai_test_register(struct vaai_test *t);
void vaai_test_fail(const char *file, int line, const char *what,
		    unsigned long long got, unsigned long long want);

#define TEST(name)							\
	static void name(void);						\
	static struct vaai_test name##_test = { #name, name, NULL };	\
	__attribute__((constructor)) static void name##_register(void)	\
	{								\
		vaai_test_register(&name##_test);			\
	}								\
	static void name(void)

#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			vaai_test_fail(__FILE__, __LINE__, #cond, 0, 0);\
	} while (0)

#define CHECK_EQ(got, want)						\
	do {								\
		unsigned long long _g = (got), _w = (want);		\
		if (_g != _w)						\
			vaai_test_fail(__FILE__, __LINE__, #got " == " #want, \
				       _g, _w);				\
	} while (0)

/* The fault f is this sense, pointing at this byte and bit (-1: none). */
#define CHECK_FAULT(f, k, a, q, b, bt)					\
	do {								\
		struct vaai_fault _f = (f);				\
		CHECK_EQ(_f.key, k);					\
		CHECK_EQ(_f.asc, a);					\
		CHECK_EQ(_f.ascq, q);					\
		CHECK_EQ(_f.byte, b);					\
		CHECK_EQ(_f.bit, bt);					\
	} while (0)

#define CHECK_OK(f)	CHECK_EQ((f).key, 0)

#endif /* VAAI_TEST_HARNESS_H */
