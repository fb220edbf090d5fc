# apns-bulk — the two commands a newcomer needs are `make demo` and `make test`.
# Both install the C libraries they build against when they are missing.

# swift on the PATH, else the toolchain where this kind of machine keeps it.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
DEB_PACKAGES := libnghttp2-dev libssl-dev libcsv-dev libzstd-dev zstd pkg-config nghttp2-client nghttp2-server openssl
# `cleanup`'s three database client libraries.
DEB_PACKAGES += libpq-dev libsqlite3-dev libmariadb-dev
# What only `make bench` needs on top: /usr/bin/time -v (peak RSS, CPU seconds), taskset, python3
# (and venv, for BENCH_PEER=1), openssl.
BENCH_DEB_PACKAGES := time util-linux python3 python3-venv openssl
# Scenario 7 (issue 20's instructions per row): callgrind, on a copy of the binary without debug info (objcopy).
BENCH_DEB_PACKAGES += valgrind binutils
# Scenario 11 (issue 33's cleanup): a private PostgreSQL cluster (psql, initdb), SQLite files.
BENCH_DEB_PACKAGES += postgresql sqlite3
# What only the tests need on top: faketime runs `send` with a clock behind APNs'.
TEST_DEB_PACKAGES := faketime
# promtool (Debian prometheus) and the real Pushgateway for the metrics tests.
TEST_DEB_PACKAGES += prometheus prometheus-pushgateway
# A real CONNECT proxy for the --proxy tests.
TEST_DEB_PACKAGES += tinyproxy
# A real browser (headless) renders report.html in the report tests.
TEST_DEB_PACKAGES += chromium
# Real database servers for `cleanup`'s tests (each test starts its own on 127.0.0.1), and sqlite3.
TEST_DEB_PACKAGES += postgresql mariadb-server sqlite3
# PyPI packages the tests need besides cryptography (installed by test-deps, each on its own line).
TEST_PIP_PACKAGES :=
# The Kubernetes manifests (jobs/kubernetes/) are checked against the official Python client's models.
TEST_PIP_PACKAGES += kubernetes
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
	    apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq $$missing >/dev/null || exit 1; \
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
	@for p in $(TEST_PIP_PACKAGES); do \
	  python3 -c "import importlib.metadata as m; m.version('$$p')" 2>/dev/null && continue; \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "test-deps: installing Python's $$p"; \
	    python3 -m pip install -q $$p 2>/dev/null || python3 -m pip install -q --break-system-packages $$p || exit 1; \
	  else \
	    echo "test-deps: Python's $$p is missing. Run: python3 -m pip install $$p" >&2; exit 1; \
	  fi; \
	done

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

# docs/report.md's picture of report.html: a demo run's page in the same headless Chromium the tests use
# (no network), scaled to a PNG under 300 KB. Needs chromium (make test-deps installs it).
REPORT_SCREENSHOT ?= docs/report-demo.png
.PHONY: report-screenshot
report-screenshot: release
	@sh jobs/demo.sh $(RELEASE_BIN) $(DEMO_DIR) >/dev/null || true
	@mkdir -p $(dir $(REPORT_SCREENSHOT))
	unshare -n python3 tools/render_page.py --width 1000 --max-height 2300 $(DEMO_DIR)/run/report.html=$(REPORT_SCREENSHOT) >/dev/null
	@echo "wrote $(REPORT_SCREENSHOT) ($$(wc -c < $(REPORT_SCREENSHOT)) bytes)"

bench: bench-deps release
	@sh benchmarks/run.sh

clean:
	rm -rf .build Examples/EmbeddedCampaign/.build $(DEMO_DIR)

# A 10M-row campaign through two mocks with GOAWAYs, resets, 429s, 5xx and latency jitter: every
# row once, no second delivery after a GOAWAY, flat memory (benchmarks/soak.py; SOAK_ROWS=N).
.PHONY: soak
soak: bench-deps release
	@python3 benchmarks/soak.py

# `make install`: the release binary with the Swift runtime linked in (--static-swift-stdlib), so it
# runs on a host without the Swift toolchain, its man page and shell completions, under
# $(DESTDIR)$(PREFIX) as packagers expect. Built in a scratch path of its own: the static link
# would otherwise replace `make release`'s binary. `make uninstall` removes exactly these files.
PREFIX ?= /usr/local
STATIC_SCRATCH ?= .build-static
STATIC_BIN := $(STATIC_SCRATCH)/release/apns-bulk
INSTALL_BIN := $(PREFIX)/bin/apns-bulk
INSTALL_MAN := $(PREFIX)/share/man/man1/apns-bulk.1
INSTALL_BASH := $(PREFIX)/share/bash-completion/completions/apns-bulk
INSTALL_ZSH := $(PREFIX)/share/zsh/site-functions/_apns-bulk
INSTALL_FISH := $(PREFIX)/share/fish/vendor_completions.d/apns-bulk.fish
INSTALLED := $(INSTALL_BIN) $(INSTALL_MAN) $(INSTALL_BASH) $(INSTALL_ZSH) $(INSTALL_FISH)

.PHONY: static-release install uninstall install-check

# Both with the same flags: a scratch path built with other flags is rebuilt from scratch.
# -ffile-prefix-map: C macros (OpenSSL's OPENSSL_free names __FILE__) would otherwise put this
# checkout's path into the binary, and two clones in two directories would build two images.
STATIC_FLAGS := -c release --static-swift-stdlib --scratch-path $(STATIC_SCRATCH) -Xcc -ffile-prefix-map=$(CURDIR)/=
static-release: deps
	$(SWIFT) build $(STATIC_FLAGS) --product apns-bulk
	$(SWIFT) build $(STATIC_FLAGS) --product generate-manual

# The man page and completions come from the built binary itself (swift-argument-parser). The
# blank lines of --help's paragraphs become mdoc's paragraph breaks: man warns about blank lines.
install: static-release
	@set -e; staged=$$(mktemp -d); trap 'rm -rf "$$staged"' EXIT; \
	$(STATIC_SCRATCH)/release/generate-manual $(STATIC_BIN) --output-directory "$$staged" >/dev/null; \
	sed -i 's/^$$/.Pp/' "$$staged/apns-bulk.1"; \
	for shell in bash zsh fish; do $(STATIC_BIN) --generate-completion-script $$shell >"$$staged/$$shell"; done; \
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(dir $(INSTALL_MAN))" "$(DESTDIR)$(dir $(INSTALL_BASH))" \
	    "$(DESTDIR)$(dir $(INSTALL_ZSH))" "$(DESTDIR)$(dir $(INSTALL_FISH))"; \
	install -m 755 $(STATIC_BIN) "$(DESTDIR)$(INSTALL_BIN)"; \
	install -m 644 "$$staged/apns-bulk.1" "$(DESTDIR)$(INSTALL_MAN)"; \
	install -m 644 "$$staged/bash" "$(DESTDIR)$(INSTALL_BASH)"; \
	install -m 644 "$$staged/zsh" "$(DESTDIR)$(INSTALL_ZSH)"; \
	install -m 644 "$$staged/fish" "$(DESTDIR)$(INSTALL_FISH)"; \
	echo "installed $(DESTDIR)$(INSTALL_BIN), its man page and bash/zsh/fish completions"

uninstall:
	@for file in $(INSTALLED); do rm -f "$(DESTDIR)$$file"; done; echo "removed $(DESTDIR)$(INSTALL_BIN), its man page and completions"

# Installs into a temporary DESTDIR and checks what a host without Swift would see: no Swift
# library in `ldd`, the binary runs with an empty environment and, where `unshare` may hide the
# toolchain's directory (root), with that directory gone; then `uninstall` leaves nothing behind.
install-check:
	@set -e; dest=$$(mktemp -d); trap 'rm -rf "$$dest"' EXIT; \
	$(MAKE) --no-print-directory install DESTDIR="$$dest" >/dev/null; \
	bin="$$dest$(INSTALL_BIN)"; toolchain=$$(dirname "$$(dirname "$$(realpath "$(SWIFT)")")"); \
	if ldd "$$bin" | grep -E "libswift|libFoundation|libdispatch|$$toolchain"; then \
	  echo "install-check: $$bin still loads the Swift runtime (above)" >&2; exit 1; fi; \
	env -i PATH=/usr/bin:/bin "$$bin" --version >/dev/null; \
	if unshare --mount true 2>/dev/null; then \
	  empty=$$(mktemp -d); \
	  unshare --mount sh -c "mount --bind '$$empty' '$$toolchain' && env -i PATH=/usr/bin:/bin '$$bin' gen --rows 3 --out '$$dest/c.csv.zst'" >/dev/null; \
	  rmdir "$$empty"; hidden=" and with $$toolchain hidden"; \
	fi; \
	for file in $(INSTALLED); do test -s "$$dest$$file" || { echo "install-check: $$file missing" >&2; exit 1; }; done; \
	bash -n "$$dest$(INSTALL_BASH)"; grep -q mock-server "$$dest$(INSTALL_ZSH)"; \
	if command -v man >/dev/null; then warnings=$$(MANWIDTH=80 man -l "$$dest$(INSTALL_MAN)" 2>&1 >/dev/null); \
	  test -z "$$warnings" || { echo "install-check: man: $$warnings" >&2; exit 1; }; fi; \
	$(MAKE) --no-print-directory uninstall DESTDIR="$$dest" >/dev/null; \
	left=$$(find "$$dest" -type f ! -name c.csv.zst); test -z "$$left" || { echo "install-check: uninstall left $$left" >&2; exit 1; }; \
	echo "install-check: the installed apns-bulk runs without the Swift toolchain's libraries$$hidden; uninstall removes it all"

# `make fuzz`: each libFuzzer target of Fuzz/ (see Fuzz/README.md) for FUZZ_SECONDS, one after the
# other, from its committed seeds (Fuzz/corpus/<name>/; what a run adds goes to FUZZ_WORK, not
# there). Fails when any of them crashes, trips ASan or breaks a property it checks; the input is
# then FUZZ_WORK/<Fuzzer>-crash-* (replay: `Fuzz/.build/release/<Fuzzer> FILE`). Instrumented in
# Fuzz's own scratch path: the normal build stays as it is.
FUZZ_SECONDS ?= 60
FUZZ_WORK ?= .build-fuzz
FUZZERS := FuzzCSV:csv FuzzJSON:json FuzzResponse:response FuzzKeys:keys FuzzJobFile:jobfile FuzzMockRequest:mockrequest
FUZZERS += FuzzCSVFast:csvfast
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
	  SWIFT_BACKTRACE=enable=no Fuzz/.build/release/$$fuzzer -max_total_time=$(FUZZ_SECONDS) -timeout=20 \
	    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(FUZZ_WORK)/$$fuzzer- \
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
# Everything runs several times slower there: APNS_BULK_TEST_TIME_SCALE stretches the tests' time
# limits (a signal ends a run within a second, a hang guard) by these factors (Tests/TestSupport/TestTime.swift).
ASAN_TIME_SCALE ?= 3
TSAN_TIME_SCALE ?= 5
ASAN_TEST = SWIFT_BACKTRACE=enable=no LSAN_OPTIONS="suppressions=$(CURDIR)/Fuzz/lsan-suppressions.txt" \
	  APNS_BULK_TEST_TIME_SCALE=$(ASAN_TIME_SCALE) $(SWIFT) test --sanitize=address --scratch-path .build-asan
TSAN_TEST = SWIFT_BACKTRACE=enable=no TSAN_OPTIONS="suppressions=$(CURDIR)/Fuzz/tsan-suppressions.txt" \
	  APNS_BULK_TEST_TIME_SCALE=$(TSAN_TIME_SCALE) $(SWIFT) test --sanitize=thread --scratch-path .build-tsan
.PHONY: sanitize-build
sanitize-build: test-deps
	SWIFT_BACKTRACE=enable=no $(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	SWIFT_BACKTRACE=enable=no $(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan

sanitize: sanitize-build
	$(ASAN_TEST)
	$(TSAN_TEST)

# `make test-under-load` and `make sanitize-under-load`: the same suites while LOAD_LOOPS busy loops
# (default 2, one a core here) take the cores, as other builds do on a shared CI machine; built
# first without the load, the loops stopped when the run ends (tools/under-load.sh). A test that
# fails only here measures the scheduler instead of the code: fix what it measures, not its bound.
LOAD_LOOPS ?= 2
.PHONY: test-under-load sanitize-under-load
test-under-load: test-deps
	$(SWIFT) build --build-tests
	bash tools/under-load.sh $(LOAD_LOOPS) $(SWIFT) test

sanitize-under-load: sanitize-build
	bash tools/under-load.sh $(LOAD_LOOPS) sh -c '$(ASAN_TEST) && $(TSAN_TEST)'

# docs/reasons.md's table is generated from the code's one table of reasons (ReasonCatalog);
# PipelineTests' ReasonCatalogTests fail while that copy is stale. (readme-reasons: the old name.)
.PHONY: docs-reasons readme-reasons
docs-reasons readme-reasons:
	APNS_BULK_WRITE_README_REASONS=1 $(SWIFT) test --filter ReasonCatalogTests/docsReasonsTableIsTheCatalog

# `make image` and `make deb`: the `make install` binary (Swift runtime linked in), stripped, as an
# OCI image archive built from Debian's packages and as a Debian package (packaging/). Both end by
# printing the path of what they built. `make image-check` runs the image as Kubernetes would (the
# manifests' own command lines, three shard pods, a killed pod resumed, the report step, the trust
# store) with podman and runc; `make deb-check` installs the package into a fresh Debian root
# filesystem and sends a campaign there. The version is the binary's own `apns-bulk --version`
# (Sources/Pipeline/Campaign/Version.swift); timestamps come from the commit (SOURCE_DATE_EPOCH).
PACKAGE_DIR ?= .build-package
PACKAGE_STAGE := $(PACKAGE_DIR)/stage
SOURCE_URL ?= https://example.org/apns-bulk
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
IMAGE_DEB_PACKAGES := mmdebstrap umoci runc podman python3-yaml dpkg-dev ca-certificates
DEB_DEB_PACKAGES := mmdebstrap dpkg-dev lintian
PACKAGE_ENV = VERSION=$$($(PACKAGE_STAGE)/usr/bin/apns-bulk --version) REVISION=$(REVISION) \
	SOURCE_URL=$(SOURCE_URL) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) STAGE=$(PACKAGE_STAGE) \
	PACKAGE_CACHE=$(PACKAGE_DIR)/apt-cache
IMAGE_ARCHIVE = $(PACKAGE_DIR)/apns-bulk-$$($(PACKAGE_STAGE)/usr/bin/apns-bulk --version).oci.tar

.PHONY: package-stage image image-check deb deb-check

# The installed tree both are made of, the binary stripped as Debian ships binaries, and its
# per-compilation module hashes zeroed (packaging/normalize-elf.py: the build is reproducible).
package-stage:
	@rm -rf $(PACKAGE_STAGE)
	@$(MAKE) --no-print-directory install DESTDIR=$(abspath $(PACKAGE_STAGE)) PREFIX=/usr >&2
	strip --strip-unneeded --remove-section=.comment --remove-section=.note $(PACKAGE_STAGE)/usr/bin/apns-bulk
	python3 packaging/normalize-elf.py $(PACKAGE_STAGE)/usr/bin/apns-bulk

image: package-stage
	@$(MAKE) --no-print-directory deps PACKAGES="$(DEB_PACKAGES) $(IMAGE_DEB_PACKAGES)" >&2
	@$(PACKAGE_ENV) WORK=$(PACKAGE_DIR)/image OUT=$(IMAGE_ARCHIVE) sh packaging/image.sh

image-check: image
	@$(PACKAGE_ENV) WORK=$(PACKAGE_DIR)/image-check IMAGE=$(IMAGE_ARCHIVE) python3 packaging/image-check.py

deb: package-stage
	@$(MAKE) --no-print-directory deps PACKAGES="$(DEB_PACKAGES) $(DEB_DEB_PACKAGES)" >&2
	@$(PACKAGE_ENV) WORK=$(PACKAGE_DIR)/deb OUT=$(PACKAGE_DIR) sh packaging/deb.sh

deb-check: deb
	@$(PACKAGE_ENV) WORK=$(PACKAGE_DIR)/deb-check OUT=$(PACKAGE_DIR) sh packaging/deb-check.sh
