# apns-bulk — the two commands a newcomer needs are `make demo` and `make test`.
# Both install the C libraries they build against when they are missing.

# swift on the PATH, else the toolchain where this kind of machine keeps it.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
DEB_PACKAGES := libnghttp2-dev libssl-dev libcsv-dev libzstd-dev zstd pkg-config nghttp2-client nghttp2-server openssl
# What only `make bench` needs on top: /usr/bin/time -v (peak RSS, CPU seconds), taskset, python3
# (and venv, for BENCH_PEER=1), openssl.
BENCH_DEB_PACKAGES := time util-linux python3 python3-venv openssl
RELEASE_BIN := .build/release/apns-bulk
DEBUG_BIN := .build/debug/apns-bulk
DEMO_DIR ?= demo-out

.PHONY: all deps test-deps bench-deps build release test example demo bench clean

all: build

# Installs whatever of DEB_PACKAGES is missing. A fresh machine's package lists may be empty,
# so `apt-get update` runs first. Without root it prints the exact command and stops.
deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "deps: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "deps: missing$$missing. Run: sudo apt-get update && sudo apt-get install -y$$missing" >&2; exit 1; \
	  fi; \
	fi

deps: PACKAGES = $(DEB_PACKAGES)

# The same installer, for the benchmark's extra tools (a recursive make keeps `deps` itself unchanged).
bench-deps:
	@$(MAKE) --no-print-directory deps PACKAGES="$(DEB_PACKAGES) $(BENCH_DEB_PACKAGES)"

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# The tests check our ES256 tokens with an independent verifier: Python's `cryptography`.
test-deps: deps
	@if ! python3 -c 'import cryptography' 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "test-deps: installing python3 and its cryptography package"; \
	    command -v python3 >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-pip >/dev/null; }; \
	    python3 -m pip install -q cryptography 2>/dev/null || python3 -m pip install -q --break-system-packages cryptography \
	      || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-cryptography >/dev/null; } || exit 1; \
	  else \
	    echo "test-deps: Python's cryptography is missing. Run: python3 -m pip install cryptography" >&2; exit 1; \
	  fi; \
	fi

test: test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test
	@$(MAKE) --no-print-directory example

# Another package that depends on this one by URL and version (a tagged clone of the working
# tree) builds and runs a small campaign against the in-process mock: see Examples/run.sh.
example: deps
	SWIFT="$(SWIFT)" bash Examples/run.sh

demo: release
	@sh jobs/demo.sh $(RELEASE_BIN) $(DEMO_DIR)

bench: bench-deps release
	@sh benchmarks/run.sh

clean:
	rm -rf .build Examples/EmbeddedCampaign/.build $(DEMO_DIR)

# `make fuzz`: each libFuzzer target of Fuzz/ (see Fuzz/README.md) for FUZZ_SECONDS, one after the
# other, from its committed seeds (Fuzz/corpus/<name>/; what a run adds goes to FUZZ_WORK, not
# there). Fails when any of them crashes, trips ASan or breaks a property it checks; the input is
# then FUZZ_WORK/<Fuzzer>-crash-* (replay: `Fuzz/.build/release/<Fuzzer> FILE`). Instrumented in
# Fuzz's own scratch path: the normal build stays as it is.
FUZZ_SECONDS ?= 60
FUZZ_WORK ?= .build-fuzz
FUZZERS := FuzzCSV:csv FuzzJSON:json FuzzResponse:response FuzzKeys:keys FuzzJobFile:jobfile FuzzMockRequest:mockrequest
FUZZ_BUILD_FLAGS := -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing

.PHONY: fuzz fuzz-build sanitize

# ld.gold warns once per ASan helper symbol ("Cannot export local symbol"): harmless, filtered.
fuzz-build: SHELL := /bin/bash
fuzz-build: deps
	set -o pipefail; cd Fuzz && $(SWIFT) build $(FUZZ_BUILD_FLAGS) 2>&1 | { grep -v "Cannot export local symbol '__asan" || true; }

fuzz: fuzz-build
	@failed=""; mkdir -p $(FUZZ_WORK); \
	for pair in $(FUZZERS); do \
	  fuzzer=$${pair%%:*}; name=$${pair##*:}; mkdir -p $(FUZZ_WORK)/corpus/$$name; \
	  extra=""; [ $$name = jobfile ] && extra="-detect_leaks=0"; \
	  SWIFT_BACKTRACE=enable=no Fuzz/.build/release/$$fuzzer -max_total_time=$(FUZZ_SECONDS) -timeout=20 \
	    -rss_limit_mb=2048 -print_final_stats=1 $$extra -artifact_prefix=$(FUZZ_WORK)/$$fuzzer- \
	    $(FUZZ_WORK)/corpus/$$name Fuzz/corpus/$$name >$(FUZZ_WORK)/$$fuzzer.log 2>&1; status=$$?; \
	  done_line=$$(grep -E '^#[0-9]+[[:space:]]+DONE' $(FUZZ_WORK)/$$fuzzer.log | tail -1); \
	  if [ $$status -eq 0 ]; then echo "fuzz: $$fuzzer: $$done_line"; \
	  else echo "fuzz: $$fuzzer FAILED (exit $$status), log $(FUZZ_WORK)/$$fuzzer.log:"; \
	    grep -v "Cannot export" $(FUZZ_WORK)/$$fuzzer.log | grep -E -A3 'ERROR|property failed|Test unit written' | head -20; \
	    failed="$$failed $$fuzzer"; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: found crashes in:$$failed" >&2; exit 1; fi

# `make sanitize`: the whole test suite under AddressSanitizer (with LeakSanitizer), then under
# ThreadSanitizer, each in its own scratch path (sanitized objects would otherwise replace the
# normal build's). Fuzz/lsan-suppressions.txt and Fuzz/tsan-suppressions.txt say why each
# suppressed report is not a bug of ours.
sanitize: test-deps
	SWIFT_BACKTRACE=enable=no $(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	SWIFT_BACKTRACE=enable=no LSAN_OPTIONS="suppressions=$(CURDIR)/Fuzz/lsan-suppressions.txt" \
	  $(SWIFT) test --sanitize=address --scratch-path .build-asan
	SWIFT_BACKTRACE=enable=no $(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	SWIFT_BACKTRACE=enable=no TSAN_OPTIONS="suppressions=$(CURDIR)/Fuzz/tsan-suppressions.txt" \
	  $(SWIFT) test --sanitize=thread --scratch-path .build-tsan
