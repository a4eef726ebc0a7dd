# Thin wrapper over CMake; see README.md.
#   make          build build/arbor (release)
#   make test     unit tests + sanitizer build + fuzz corpus replay + install test
#   make demo     build the command only and run the main job on its built-in default
#   make bench    build and run the benchmarks (not part of test)
#   make docs     build the API reference with Doxygen (build/docs/html/index.html)
#   make fuzz     build the libFuzzer targets with clang (build-fuzz/)
#   make deps     install what the build and tests need (Debian, as root: scripts/deps.sh)
#   make format   clang-format every source file
# The build prints warnings and errors only; V=1 shows every command.
# make demo and make test set the machine up first (scripts/deps.sh --auto):
# what they need and is missing is installed when the user is root with
# apt-get, saying so in one line; otherwise they name the command to run.
# Plain make installs nothing: CMake names any library that is missing.

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
BUILD_TYPE ?= Release
V ?= 0

ifeq ($(V),0)
CONFIGURE_OUT = >/dev/null
BUILD_FLAGS = -- --no-print-directory
RULE_MESSAGES = -DCMAKE_RULE_MESSAGES=OFF -DCMAKE_TARGET_MESSAGES=OFF
else
CONFIGURE_OUT =
BUILD_FLAGS = -- VERBOSE=1
RULE_MESSAGES = -DCMAKE_RULE_MESSAGES=ON -DCMAKE_TARGET_MESSAGES=ON
endif

.PHONY: all deps deps-build deps-test configure build asan test test-release test-asan demo bench docs fuzz format clean

all: build

deps:
	@sh scripts/deps.sh --install

deps-build:
	@sh scripts/deps.sh --auto build

deps-test:
	@sh scripts/deps.sh --auto test

configure:
	@$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(RULE_MESSAGES) $(CONFIGURE_OUT)

build: configure
	@$(CMAKE) --build build -j $(JOBS) $(BUILD_FLAGS)

asan:
	@$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DARB_SANITIZE=ON $(RULE_MESSAGES) $(CONFIGURE_OUT)
	@$(CMAKE) --build build-asan -j $(JOBS) $(BUILD_FLAGS)

# Each run records every check's outcome (tests/cli/lib.sh, testkit.h) in
# Testing/checks.log; scripts/test_report.sh says what was skipped, and why.
test-release: build
	@rm -f build/Testing/checks.log
	@cd build && ctest --output-on-failure -j $(JOBS) --timeout 600 --output-junit junit.xml; \
	rc=$$?; cd .. && sh scripts/test_report.sh build; exit $$rc

test-asan: asan
	@rm -f build-asan/Testing/checks.log
	@cd build-asan && ctest --output-on-failure -j $(JOBS) --timeout 900 --output-junit junit.xml; \
	rc=$$?; cd .. && sh scripts/test_report.sh build-asan; exit $$rc

test:
	@$(MAKE) --no-print-directory deps-test
	@$(MAKE) --no-print-directory test-release test-asan
	@echo "make test: release and sanitizer runs passed"

demo:
	@sh scripts/deps.sh --auto build
	@$(MAKE) --no-print-directory configure
	@$(CMAKE) --build build -j $(JOBS) --target arbor_cli $(BUILD_FLAGS)
	@sh scripts/demo.sh build/arbor

bench: build
	@sh scripts/bench.sh build

docs: configure
	@$(CMAKE) --build build --target docs $(BUILD_FLAGS)

fuzz:
	@sh scripts/deps.sh --fuzz
	@CC=clang $(CMAKE) -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DARB_FUZZ=ON $(RULE_MESSAGES) $(CONFIGURE_OUT)
	@$(CMAKE) --build build-fuzz -j $(JOBS) $(BUILD_FLAGS)
	@echo "fuzzers in build-fuzz/; see docs/testing.md"

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-fuzz
