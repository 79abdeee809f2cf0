// SPDX-License-Identifier: GPL-2.0
/* Runs every registered test; exits non-zero if any check failed. */
#include <stdio.h>

#include "harness.h"

static struct vaai_test *vaai_tests, **vaai_tests_tail = &vaai_tests;
static unsigned int vaai_test_failed_checks;

void vaai_test_register(struct vaai_test *t)
{
	*vaai_tests_tail = t;
	vaai_tests_tail = &t->next;
}

void vaai_test_fail(const char *file, int line, const char *what,
		    unsigned long long got, unsigned long long want)
{
	vaai_test_failed_checks++;
	printf("  %s:%d: %s (got %llu / 0x%llx, want %llu / 0x%llx)\n",
	       file, line, what, got, got, want, want);
}

int main(void)
{
	unsigned int passed = 0, failed = 0;
	struct vaai_test *t;

	for (t = vaai_tests; t; t = t->next) {
		unsigned int before = vaai_test_failed_checks;

		t->fn();
		if (vaai_test_failed_checks == before) {
			passed++;
		} else {
			failed++;
			printf("FAIL %s\n", t->name);
		}
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed || !passed;
}
