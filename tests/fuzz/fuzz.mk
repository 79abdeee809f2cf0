# libFuzzer targets over the pure parsers (tests/fuzz/fuzz_*.c), built with
# clang, ASan and UBSan.  `make fuzz` runs each for FUZZ_SECONDS from the
# seeds in tests/fuzz/corpus/<target>/, growing build/fuzz/corpus/<target>/;
# a crash or a broken invariant fails it and leaves the input in
# build/fuzz/<target>-crash-*.  Included by the top Makefile.
FUZZ_TARGETS := unmap_list xcopy_list cdb sense range odx_list
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang-14
FUZZ_BINS := $(addprefix build/fuzz/fuzz_,$(FUZZ_TARGETS))
FUZZ_COMMON := tests/fuzz/fuzz_common.c tests/parsers/xcopy_build.c

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_COMMON) \
		$(PARSER_SRCS) $(PARSER_HDRS) tests/parsers/xcopy_build.h \
		| $(SCSI_PROTO_H)
	@mkdir -p $(@D)
	nice -n 10 $(FUZZ_CC) $(PARSER_CFLAGS) -Itests/fuzz \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o $@ $< $(FUZZ_COMMON) $(PARSER_SRCS)

fuzz-build: $(FUZZ_BINS)

# The targets side by side, one per CPU (the corpus and log are each
# target's own).
fuzz: fuzz-build
	@$(MAKE) -s -j$$(nproc) $(addprefix fuzz-run-,$(FUZZ_TARGETS))

fuzz-run-%: build/fuzz/fuzz_%
	@mkdir -p build/fuzz/corpus/$*
	@echo "fuzz: $* for $(FUZZ_SECONDS) s"
	@if ! nice -n 10 build/fuzz/fuzz_$* -max_total_time=$(FUZZ_SECONDS) \
		-use_value_profile=1 -print_final_stats=1 \
		-artifact_prefix=build/fuzz/$*- \
		build/fuzz/corpus/$* tests/fuzz/corpus/$* \
		> build/fuzz/$*.log 2>&1; then \
		tail -n 30 build/fuzz/$*.log; \
		echo "fuzz: $* FAILED, input left in build/fuzz/$*-*" >&2; \
		exit 1; \
	fi
	@grep -E 'DONE|stat::number_of_executed_units' build/fuzz/$*.log | \
		sed 's/^/fuzz: $*: /'

.PHONY: fuzz fuzz-build
