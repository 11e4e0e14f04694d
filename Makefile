# Fermata: `make run` starts the server, `make test` runs every test.

SWIFT ?= swift
CONFIG ?= etc/fermata.conf
DEMO_MUSIC ?= var/demo-music
PYTHON ?= /usr/bin/python3

.PHONY: lint all deps deps-run deps-build deps-deb build fresh-build release run demo test unit conformance bench install deb clean fuzz-build fuzz fuzz-short

all: build

deps:
	scripts/install-deps.sh test

deps-run:
	scripts/install-deps.sh run

deps-build:
	scripts/install-deps.sh build

deps-deb:
	scripts/install-deps.sh deb

build: deps-build
	$(SWIFT) build

# A plain `swift build` on an empty scratch path, as on a fresh clone: `--build-tests` orders the modules
# differently and once hid a build that failed this way (Foundation and ICU's C headers in one module). `make test`
# then builds and runs the unit tests in the same scratch path, as a user's `swift build` then `swift test` does (that
# order once failed too: 'UErrorCode' has different definitions, until ICU's headers moved behind CICUShim).
FRESH = .build/fresh
fresh-build: deps-build
	rm -rf $(FRESH)
	$(SWIFT) build --scratch-path $(FRESH)

release: deps-build
	$(SWIFT) build -c release

# swift-format (the toolchain's `swift format`, configured by .swift-format) with every finding an error.
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift
	@# The command handlers hold no unsafe pointer: the query engine and the byte tables keep theirs in Library.
	@! grep -rnE 'Unsafe|unowned\(unsafe\)' Sources/Server || { echo 'lint: unsafe pointers in Sources/Server (above)'; exit 1; }

demo: deps-run
	mkdir -p $(dir $(DEMO_MUSIC)) var
	$(PYTHON) tools/make-fixtures.py $(DEMO_MUSIC)
	printf 'music_directory "%s"\n' "$(abspath $(DEMO_MUSIC))" > var/demo.conf

# Starts Fermata in the foreground on $(CONFIG) (Ctrl-C stops it).
run: deps-run release demo
	.build/release/fermata $(CONFIG)

# A fresh plain build, unit tests, then the conformance suite against the real mpd. The suite runs the release build: its
# timing-based reply collection and its load tests expect an optimised server. It runs its files in CONFORMANCE_JOBS
# pytest-xdist workers (one file's tests stay in one worker, in order; each worker starts its own servers), then the
# cases marked `serial` (they measure other clients' latency) alone.
CONFORMANCE_JOBS ?= 2
test: deps
	@date +'== %T lint'
	$(MAKE) lint
	@date +'== %T fresh build'
	$(MAKE) fresh-build
	@date +'== %T unit tests'
	$(SWIFT) build --build-tests --scratch-path $(FRESH)
	$(SWIFT) test --skip-build --scratch-path $(FRESH)
	@date +'== %T short fuzzing'
	$(MAKE) fuzz-short
	@date +'== %T conformance'
	$(SWIFT) build -c release
	FERMATA_BIN=$(CURDIR)/.build/release/fermata $(PYTHON) -m pytest -q -n $(CONFORMANCE_JOBS) --dist loadfile \
		-m "not serial" --durations=25 conformance
	@date +'== %T conformance: the latency cases, alone'
	FERMATA_BIN=$(CURDIR)/.build/release/fermata $(PYTHON) -m pytest -q -m serial conformance
	@date +'== %T done'

unit: deps-build
	$(SWIFT) test

conformance: deps release
	FERMATA_BIN=$(CURDIR)/.build/release/fermata $(PYTHON) -m pytest -q -n $(CONFORMANCE_JOBS) --dist loadfile \
		-m "not serial" conformance
	FERMATA_BIN=$(CURDIR)/.build/release/fermata $(PYTHON) -m pytest -q -m serial conformance

# Fermata against mpd on a generated MP3 library and on a mixed-format one (100k songs by default; SONGS=2000 for
# a quick run), then playback CPU time per format and audio-path allocations, CPU through httpd (lame, vorbis) and
# through a fifo into snapserver. Not part of `make test`; writes benchmarks/RESULTS.md.
bench: deps release
	$(PYTHON) benchmarks/run.py --songs $(or $(SONGS),100000)
	$(PYTHON) benchmarks/run.py --mixed --songs $(or $(SONGS),100000)
	$(PYTHON) benchmarks/playback.py
	$(PYTHON) benchmarks/httpd.py
	$(PYTHON) benchmarks/snapcast.py

# libFuzzer targets (fuzz/README.md; fuzz/run.sh lists them all). Built into .build/fuzz with
# AddressSanitizer, apart from the normal build. `make fuzz TARGET=protocol SECONDS=600` fuzzes one target;
# `make fuzz-short` (part of `make test`) replays fuzz/regressions and fuzzes each target for 20 s.
TARGET ?= protocol
SECONDS ?= 600
fuzz-build: deps-build
	SWIFT=$(SWIFT) fuzz/build.sh

fuzz: fuzz-build
	nice -n 19 fuzz/run.sh $(TARGET) $(SECONDS)

fuzz-short: fuzz-build
	fuzz/run.sh --short 20

# Installs the release binary, the systemd units (ExecStart pointed at $(PREFIX)/bin) and, when there is none yet,
# the Debian package's /etc/fermata.conf (which runs the service as the user "fermata": create it, see README).
PREFIX ?= /usr/local
install: release
	install -D -m 755 .build/release/fermata $(DESTDIR)$(PREFIX)/bin/fermata
	mkdir -p $(DESTDIR)/etc/systemd/system
	sed 's|/usr/bin/fermata|$(PREFIX)/bin/fermata|' etc/fermata.service > $(DESTDIR)/etc/systemd/system/fermata.service
	install -D -m 644 etc/fermata.socket $(DESTDIR)/etc/systemd/system/fermata.socket
	test -e $(DESTDIR)/etc/fermata.conf || install -D -m 644 packaging/deb/fermata.conf $(DESTDIR)/etc/fermata.conf

# The Debian package, built with dpkg-deb from the release binary (scripts/make-deb.py says what it holds):
# .build/deb/fermata_<version>_<arch>.deb. Install it with `dpkg -i` or `apt install ./<file>`.
deb: deps-deb release
	$(PYTHON) scripts/make-deb.py --binary .build/release/fermata --out .build/deb

clean:
	rm -rf .build var conformance/.cache
