# The pure parsers, target_core/parse/ (vaai_parse.h), built for the host:
# unit tests here, fuzzers in tests/fuzz.  Included by the top Makefile.
PARSER_SRCS := $(sort $(wildcard target_core/parse/*.c))
PARSER_HDRS := target_core/parse/vaai_parse.h target_core/compat.h \
		$(wildcard tests/fuzz/kcompat/*.h)
SCSI_PROTO_H := $(KSRC)/include/scsi/scsi_proto.h
PARSER_CFLAGS := -std=gnu11 -g -O1 -Wall -Wextra -Werror -Wno-sign-compare \
		-Wno-unused-parameter -Wno-missing-field-initializers \
		-fno-omit-frame-pointer \
		-Itarget_core/parse -Itests/fuzz/kcompat -Itests/parsers \
		-DVAAI_SCSI_PROTO_H='"$(SCSI_PROTO_H)"'
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all
PARSER_CC ?= gcc

PARSER_TESTS := $(sort $(wildcard tests/parsers/test_*.c)) tests/parsers/xcopy_build.c

build/parsers/test-parsers: tests/parsers/main.c $(PARSER_TESTS) \
		$(PARSER_SRCS) $(PARSER_HDRS) tests/parsers/harness.h tests/parsers/xcopy_build.h \
		| $(SCSI_PROTO_H)
	@mkdir -p $(@D)
	$(PARSER_CC) $(PARSER_CFLAGS) $(SANITIZE) -o $@ \
		tests/parsers/main.c $(PARSER_TESTS) $(PARSER_SRCS)

$(SCSI_PROTO_H):
	@echo "no $@: install the kernel headers (make deps) or set KSRC" >&2
	@false

test-parsers: build/parsers/test-parsers
	build/parsers/test-parsers
