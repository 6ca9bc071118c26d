# rxpath: `make` builds build/rxpath and build/librxpath.a; `make test` runs every test.
# SAN=1 builds into build-san/ with AddressSanitizer and UndefinedBehaviorSanitizer.
# EXTRA_CFLAGS adds flags (CI builds with clang and EXTRA_CFLAGS=-Werror).

CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif

ifeq ($(SAN),1)
BUILD := build-san
OPT := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
else
BUILD := build
OPT := -O2
LDSAN :=
endif

# Hardening (tests/cli/test_hardening.sh checks the binary): stack protector,
# a position-independent executable with full RELRO, _FORTIFY_SOURCE, and on
# x86-64 stack clash and control-flow protection. No _FORTIFY_SOURCE with
# SAN=1: AddressSanitizer checks every access the fortified calls would, and
# its interceptors do not see through the fortified ones.
HARDEN := -fstack-protector-strong -fPIE
HARDEN_LD := -pie -Wl,-z,relro,-z,now
ifneq ($(SAN),1)
HARDEN += -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2
endif
ifneq ($(findstring x86_64,$(shell $(CC) -dumpmachine)),)
HARDEN += -fstack-clash-protection -fcf-protection=full
endif

CFLAGS ?= -g
CFLAGS += -std=c11 -D_GNU_SOURCE $(OPT) -Wall -Wextra -Wshadow -Wstrict-prototypes \
	  -Wmissing-prototypes -Iinclude -Isrc -MMD -MP $(HARDEN) $(EXTRA_CFLAGS)
LDLIBS := -lxdp -lbpf -lpcap -lmnl -lmicrohttpd -lpthread -lm
LDFLAGS += $(LDSAN) $(HARDEN_LD)

# the library: every layer but the program and its benchmarks (README, "Layout")
LIB_SRC := $(wildcard src/core/*.c src/port/*.c src/fib/*.c src/net/*.c src/engine/*.c src/ctl/*.c)
APP_SRC := $(wildcard src/app/*.c src/bench/*.c)
TEST_SRC := $(wildcard tests/unit/test_*.c)

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
APP_OBJ := $(APP_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
DEPS_STAMP := build/.deps-ok

.PHONY: all test unit clean deps install uninstall
# keep the test objects: no "rm" after the test count, and quicker rebuilds
.SECONDARY:
all: $(BUILD)/rxpath $(BUILD)/librxpath.a

# Debian packages first (installed with apt-get when run as root).
$(DEPS_STAMP): scripts/deps.sh
	@bash scripts/deps.sh
	@mkdir -p $(dir $@) && touch $@
deps: $(DEPS_STAMP)

# Objects are rebuilt when the flags change (the hardening flags, EXTRA_CFLAGS):
# the stamp is rewritten only when they differ from the last build's.
FLAGS_STAMP := $(BUILD)/.flags
FLAGS_NOW := $(subst ','\'',$(CC) $(CFLAGS) | $(LDFLAGS) $(LDLIBS))
.PHONY: FORCE
$(FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = '$(FLAGS_NOW)' ] || printf '%s\n' '$(FLAGS_NOW)' >$@

$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/librxpath.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/rxpath: $(APP_OBJ) $(BUILD)/librxpath.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/obj/tests/unit/check.o $(BUILD)/librxpath.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

unit: $(TEST_BIN) $(BUILD)/rxpath

test: unit
	@BUILD=$(BUILD) bash tests/run.sh

clean:
	rm -rf build build-san build-clang

# `make install` (as root, or with DESTDIR=dir for a package): the binary, the
# man page, the systemd unit (in $(PREFIX)/lib/systemd/system, which systemd
# reads for /usr/local and /usr) and, only if there is none yet, the example
# config in /etc/rxpath. The unit is rewritten to name $(BINDIR) and $(SYSCONFDIR).
# `make uninstall` removes what install put in place, except the config.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL ?= install

install: $(BUILD)/rxpath
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/rxpath
	$(INSTALL) -m 0755 $(BUILD)/rxpath $(DESTDIR)$(BINDIR)/rxpath
	$(INSTALL) -m 0644 docs/rxpath.8 $(DESTDIR)$(MANDIR)/man8/rxpath.8
	sed -e 's|/usr/local/bin/rxpath|$(BINDIR)/rxpath|g' -e 's|/etc/rxpath/|$(SYSCONFDIR)/rxpath/|g' \
		dist/rxpath.service >$(DESTDIR)$(UNITDIR)/rxpath.service.tmp
	chmod 0644 $(DESTDIR)$(UNITDIR)/rxpath.service.tmp
	mv -f $(DESTDIR)$(UNITDIR)/rxpath.service.tmp $(DESTDIR)$(UNITDIR)/rxpath.service
	@# an operator's config is never overwritten
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/rxpath/rxpath.conf ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/rxpath/rxpath.conf"; \
	else \
		echo "$(INSTALL) -m 0644 dist/rxpath.conf $(DESTDIR)$(SYSCONFDIR)/rxpath/rxpath.conf"; \
		$(INSTALL) -m 0644 dist/rxpath.conf $(DESTDIR)$(SYSCONFDIR)/rxpath/rxpath.conf; \
	fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/rxpath $(DESTDIR)$(MANDIR)/man8/rxpath.8 \
		$(DESTDIR)$(UNITDIR)/rxpath.service
	@echo "left in place: $(DESTDIR)$(SYSCONFDIR)/rxpath/rxpath.conf (remove it by hand if unwanted)"

# Fuzzing with clang's libFuzzer, built into build-fuzz/ with ASan and UBSan
# (tests/fuzz/README.md). `make fuzz` runs each harness for FUZZ_SECONDS on a
# scratch copy of its corpus (build-fuzz/corpus/, never the repository) and
# prints executions, coverage and crashes; `make fuzz-smoke` is the short run
# that `make test` does. FUZZ_TARGETS picks harnesses (rx config).
FUZZ_CC ?= clang
FUZZ_BUILD := build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= rx config
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -Iinclude -Isrc -MMD -MP \
	-fsanitize=fuzzer-no-link $(FUZZ_SAN)
# the harnesses link the library like any other program (the parser, the engine are in it)
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(LIB_SRC))
FUZZ_BIN := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
# fuzz_rx opens every buffer the router allocates (bytes past a received frame are poisoned)
FUZZ_LDFLAGS_rx := -Wl,--wrap=rxp_local_alloc

.PHONY: fuzz fuzz-smoke fuzz-build
$(FUZZ_BUILD)/.deps-ok: scripts/deps.sh
	@RXP_NEED_FUZZ=1 bash scripts/deps.sh
	@mkdir -p $(dir $@) && touch $@

$(FUZZ_BUILD)/obj/%.o: %.c | $(FUZZ_BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/librxpath-fuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_BUILD)/librxpath-fuzz.a
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) $(FUZZ_LDFLAGS_$*) -o $@ $^ $(LDLIBS)

fuzz-build: $(FUZZ_BIN)

fuzz: fuzz-build
	@bash tests/fuzz/run_fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: fuzz-build
	@bash tests/fuzz/test_fuzz_smoke.sh

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
-include $(shell find $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
