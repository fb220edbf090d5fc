# apns-bulk — the two commands a newcomer needs are `make demo` and `make test`.
# Both install the C libraries they build against when they are missing.

# swift on the PATH, else the toolchain where this kind of machine keeps it.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
DEB_PACKAGES := libnghttp2-dev libssl-dev libcsv-dev libzstd-dev zstd pkg-config nghttp2-client nghttp2-server openssl
# What only `make bench` needs on top: /usr/bin/time -v (peak RSS, CPU seconds), taskset, python3
# (and venv, for BENCH_PEER=1), openssl.
BENCH_DEB_PACKAGES := time util-linux python3 python3-venv openssl
# What only the tests need on top: faketime runs `send` with a clock behind APNs'.
TEST_DEB_PACKAGES := faketime
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
	@$(MAKE) --no-print-directory deps PACKAGES="$(DEB_PACKAGES) $(TEST_DEB_PACKAGES)"
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

# A 10M-row campaign through two mocks with GOAWAYs, resets, 429s, 5xx and latency jitter: every
# row once, no second delivery after a GOAWAY, flat memory (benchmarks/soak.py; SOAK_ROWS=N).
.PHONY: soak
soak: bench-deps release
	@python3 benchmarks/soak.py
