# Fermata: `make run` starts the server, `make test` runs every test.

SWIFT ?= swift
CONFIG ?= etc/fermata.conf
DEMO_MUSIC ?= var/demo-music
PYTHON ?= /usr/bin/python3

.PHONY: all deps deps-run deps-build build fresh-build release run demo test unit conformance bench install clean fuzz-build fuzz fuzz-short

all: build

deps:
	scripts/install-deps.sh test

deps-run:
	scripts/install-deps.sh run

deps-build:
	scripts/install-deps.sh build

build: deps-build
	$(SWIFT) build

# A plain `swift build` on an empty scratch path, as on a fresh clone: `--build-tests` orders the modules
# differently and once hid a build that failed this way (Foundation and ICU's C headers in one module).
fresh-build: deps-build
	rm -rf .build/fresh
	$(SWIFT) build --scratch-path .build/fresh
	rm -rf .build/fresh

release: deps-build
	$(SWIFT) build -c release

demo: deps-run
	mkdir -p $(dir $(DEMO_MUSIC)) var
	$(PYTHON) tools/make-fixtures.py $(DEMO_MUSIC)
	printf 'music_directory "%s"\n' "$(abspath $(DEMO_MUSIC))" > var/demo.conf

# Starts Fermata in the foreground on $(CONFIG) (Ctrl-C stops it).
run: deps-run release demo
	.build/release/fermata $(CONFIG)

# A fresh plain build, unit tests, then the conformance suite against the real mpd. The suite runs the release build: its
# timing-based reply collection and its load tests expect an optimised server.
test: deps
	$(MAKE) fresh-build
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) fuzz-short
	$(SWIFT) build -c release
	FERMATA_BIN=$(CURDIR)/.build/release/fermata $(PYTHON) -m pytest -q conformance

unit: deps-build
	$(SWIFT) test

conformance: deps release
	FERMATA_BIN=$(CURDIR)/.build/release/fermata $(PYTHON) -m pytest -q conformance

# Fermata against mpd on a generated MP3 library and on a mixed-format one (100k songs by default; SONGS=2000 for
# a quick run), then playback CPU time per format and audio-path allocations, and CPU through httpd (lame, vorbis). Not part of `make test`; writes benchmarks/RESULTS.md.
bench: deps release
	$(PYTHON) benchmarks/run.py --songs $(or $(SONGS),100000)
	$(PYTHON) benchmarks/run.py --mixed --songs $(or $(SONGS),100000)
	$(PYTHON) benchmarks/playback.py
	$(PYTHON) benchmarks/httpd.py

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

# Installs the release binary and the systemd units (see etc/fermata.service for the rest).
PREFIX ?= /usr/local
install: release
	install -D -m 755 .build/release/fermata $(DESTDIR)$(PREFIX)/bin/fermata
	install -D -m 644 etc/fermata.service $(DESTDIR)/etc/systemd/system/fermata.service
	install -D -m 644 etc/fermata.socket $(DESTDIR)/etc/systemd/system/fermata.socket

clean:
	rm -rf .build var conformance/.cache
